import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, testApp } from '../helpers/app.js';
import { eventsOf } from '../helpers/events.js';
import { endpointAt, placeOrder } from '../helpers/webhooks.js';

/**
 * The retention of events in a test key's time (docs/testing-clients.md#testing-your-client-in-seconds), and by the
 * real time for every other key.
 */

const DAY = 86_400_000;
let t: TestApp;
beforeAll(async () => {
  // Orders that never move by themselves: only the placements' events are written.
  t = await testApp({ env: { EVENTS_RETENTION_DAYS: '1', FULFILMENT_APPROVE_SECONDS: '0' } });
});
afterAll(async () => {
  await t.close();
});
const advance = (key: string, seconds: number) =>
  t.request({ method: 'POST', url: '/test-clock/advance', headers: { 'x-api-key': key }, payload: { seconds } });

describe('retention', () => {
  it("sweeps the other keys' events by the real time, past a test key's events a year ahead", async () => {
    const [live, test] = [await t.newKey('pro'), await t.newKey({ plan: 'pro', test: true })];
    await placeOrder(t, live);
    await t.request({ method: 'POST', url: '/test-clock/freeze', headers: { 'x-api-key': test } });
    await advance(test, 365 * 86_400);
    await placeOrder(t, test);
    await placeOrder(t, live);
    t.clock.advance(DAY + 1_000);
    await t.retention.sweep();
    expect(await eventsOf(t, live)).toHaveLength(0);
    expect(await eventsOf(t, test)).toHaveLength(1);
  });

  it("sweeps a test key's events by its own clock, and keeps an event whose deliveries are pending", async () => {
    const key = await t.newKey({ plan: 'pro', test: true });
    await t.request({ method: 'POST', url: '/test-clock/freeze', headers: { 'x-api-key': key } });
    await placeOrder(t, key);
    await endpointAt(t, key, 'http://127.0.0.1:9/never', ['order.placed']);
    await placeOrder(t, key);
    // The real time passing takes nothing of a frozen clock's.
    t.clock.advance(3 * DAY);
    await t.retention.sweep();
    expect(await eventsOf(t, key)).toHaveLength(2);
    await advance(key, 86_401);
    await t.retention.sweep();
    // The first is gone; the second waits for its delivery.
    const left = await eventsOf(t, key);
    expect(left).toHaveLength(1);
    expect(left[0]!.type).toBe('order.placed');
  });
});
