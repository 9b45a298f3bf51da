/** The client's events and `advanceOrder` against the real server (one fake clock for both). */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EventPage, OrderNotAdvanceableError, PetstoreClient, TestKeyRequiredError } from '../../client/index.js';
import { type TestApp, testApp } from '../helpers/app.js';
import { clientOptions } from './harness.js';

let t: TestApp;
let client: PetstoreClient;
let live: PetstoreClient;

beforeAll(async () => {
  t = await testApp();
  client = new PetstoreClient(clientOptions(t.app, t.clock, await t.newKey({ plan: 'business', test: true })));
  live = new PetstoreClient(clientOptions(t.app, t.clock, await t.newKey('business')));
});
afterAll(async () => t.close());

describe('the client', () => {
  it('advanceOrder moves a test key’s order one step a call, and throws OrderNotAdvanceableError at the end', async () => {
    const order = await client.placeOrder({ petId: 1 });
    expect((await client.advanceOrder(order.id)).status).toBe('approved');
    expect(await client.advanceOrder(order.id)).toEqual({ ...order, status: 'delivered' });
    await expect(client.advanceOrder(order.id)).rejects.toBeInstanceOf(OrderNotAdvanceableError);
  });

  it('advanceOrder with a live key throws TestKeyRequiredError, a 403', async () => {
    const order = await live.placeOrder({ petId: 1 });
    await expect(live.advanceOrder(order.id)).rejects.toMatchObject({ constructor: TestKeyRequiredError, status: 403 });
  });

  it('events() iterates every page, newest first; a filter of several types goes as the parameter repeated', async () => {
    for (let i = 0; i < 5; i++) await client.advanceOrder((await client.placeOrder({ petId: 1 })).id);
    const pages: EventPage[] = [];
    for await (const page of client.events({ limit: 3 })) pages.push(page);
    const events = pages.flatMap((page) => page.data);
    // The first test's order (placed, approved, delivered), then five placed and approved.
    expect(events.length).toBe(13);
    expect(pages.slice(0, -1).every((page) => page.data.length === 3 && page.nextCursor !== null)).toBe(true);
    expect(pages.at(-1)!.nextCursor).toBeNull();
    expect(new Set(events.map((e) => e.id)).size).toBe(events.length);

    const moves: string[] = [];
    for await (const page of client.events({ type: ['order.approved', 'order.delivered'], limit: 100 }))
      moves.push(...page.data.map((e) => e.type));
    expect(moves.filter((type) => type === 'order.delivered')).toHaveLength(1);
    expect(moves.filter((type) => type === 'order.approved')).toHaveLength(6);
    expect(await client.getEvent(events[0]!.id)).toEqual(events[0]);
  });

  it('events() stops where the caller breaks: the pages after it are never read', async () => {
    const read: string[] = [];
    const key = await t.newKey({ plan: 'business', test: true });
    const client2 = new PetstoreClient({
      ...clientOptions(t.app, t.clock, key),
      onResponse: (e) => read.push(e.operation),
    });
    for (let i = 0; i < 4; i++) await client2.placeOrder({ petId: 1 });
    read.length = 0;
    for await (const page of client2.events({ limit: 1 })) {
      expect(page.data).toHaveLength(1);
      break;
    }
    expect(read).toEqual(['listEvents']);
  });
});
