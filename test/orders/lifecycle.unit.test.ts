import { describe, expect, it } from 'vitest';
import {
  dueAfterEntering,
  eventTypeOf,
  isCancellable,
  isComplete,
  nextStatus,
  ORDER_STATUSES,
  statusEnteredBy,
} from '../../src/orders/lifecycle.js';

const delays = { approveMs: 10_000, deliverMs: 60_000 };

describe('the order lifecycle (docs/orders-and-events.md)', () => {
  it('moves placed → approved → delivered and no further', () => {
    expect(ORDER_STATUSES.map(nextStatus)).toEqual(['approved', 'delivered', undefined, undefined]);
  });

  it('cancels a placed or an approved order, never a delivered or a cancelled one', () => {
    expect(ORDER_STATUSES.filter(isCancellable)).toEqual(['placed', 'approved']);
  });

  it('is complete exactly when delivered', () => {
    expect(ORDER_STATUSES.filter(isComplete)).toEqual(['delivered']);
  });

  it('enters each state with its own event, and each event names the state it entered', () => {
    expect(ORDER_STATUSES.map(eventTypeOf)).toEqual([
      'order.placed',
      'order.approved',
      'order.delivered',
      'order.cancelled',
    ]);
    for (const status of ORDER_STATUSES) expect(statusEnteredBy(eventTypeOf(status))).toBe(status);
  });

  it('falls due for its next move the configured delay after entering a state; never from a final one', () => {
    const now = Date.parse('2026-11-27T12:00:00.000Z');
    expect(dueAfterEntering('placed', now, delays)).toBe(now + 10_000);
    expect(dueAfterEntering('approved', now, delays)).toBe(now + 60_000);
    expect(dueAfterEntering('delivered', now, delays)).toBeNull();
    expect(dueAfterEntering('cancelled', now, delays)).toBeNull();
  });

  it('never moves by itself where the delay is configured as never (null)', () => {
    expect(dueAfterEntering('placed', 0, { approveMs: null, deliverMs: 60_000 })).toBeNull();
    expect(dueAfterEntering('approved', 0, { approveMs: 10_000, deliverMs: null })).toBeNull();
  });
});
