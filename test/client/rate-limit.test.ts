/** The rate-limit state of each response, as the client exposes it. */
import { afterEach, expect, it } from 'vitest';
import { PetstoreClient, type RateLimitState } from '../../client/index.js';
import { parseRateLimit } from '../../client/rate-limit.js';
import { type TestApp, testApp } from '../helpers/app.js';
import { clientOptions } from './harness.js';

let t: TestApp;
afterEach(async () => t.close());

it('exposes every response’s state: both windows with their quotas, and the binding window', async () => {
  t = await testApp();
  const key = await t.newKey('free');
  const states: RateLimitState[] = [];
  const client = new PetstoreClient({
    ...clientOptions(t.app, t.clock, key),
    onResponse: (e) => states.push(e.rateLimit),
  });
  await client.listPets();
  await client.listOrders();
  expect(states).toHaveLength(2);
  expect(client.rateLimit).toBe(states[1]);
  expect(client.rateLimit).toEqual({
    at: t.clock(),
    limit: 60,
    remaining: 58,
    reset: new Date(t.clock() + 60_000),
    windows: [
      // With quota left, `t` is the window in effect: the minute's oldest counted request leaves in 60 s,
      // the day ends at midnight, 12 h away on the test clock.
      { name: 'minute', remaining: 58, nextInSeconds: 60, quota: 60, windowSeconds: 60 },
      { name: 'day', remaining: 998, nextInSeconds: 43_200, quota: 1000, windowSeconds: 86_400 },
    ],
    retryAfterSeconds: undefined,
  });
});

it('reads Retry-After as seconds or as an HTTP date', () => {
  const at = Date.parse('2026-11-21T12:00:00Z');
  expect(parseRateLimit(new Headers({ 'retry-after': '48' }), at).retryAfterSeconds).toBe(48);
  expect(parseRateLimit(new Headers({ 'retry-after': 'Sat, 21 Nov 2026 12:01:30 GMT' }), at).retryAfterSeconds).toBe(
    90,
  );
});

it('asks for its usage without using any: usage() reports the plan and both windows, and counts nothing', async () => {
  t = await testApp();
  const key = await t.newKey('free');
  const client = new PetstoreClient(clientOptions(t.app, t.clock, key));
  await client.listPets();
  const first = await client.usage();
  const second = await client.usage();
  expect(first).toEqual(second);
  expect(first).toMatchObject({
    plan: 'free',
    ban: null,
    today: 1,
    windows: { minute: { limit: 60, used: 1, remaining: 59 }, day: { limit: 1000, used: 1 } },
  });
  expect(client.rateLimit?.remaining).toBe(59);
});

it('revalidates what it read: sends If-None-Match for a body it keeps, takes the 304 for it, and counts the requests saved', async () => {
  t = await testApp();
  const key = await t.newKey('free');
  const sent: Request[] = [];
  const options = clientOptions(t.app, t.clock, key);
  const client = new PetstoreClient({
    ...options,
    fetch: (request) => (sent.push(request.clone()), options.fetch!(request)),
  });
  const first = await client.getPet(1);
  const page = await client.listPets({ limit: 3 });
  expect(client.rateLimit?.remaining).toBe(58);
  expect(await client.getPet(1)).toEqual(first);
  expect(await client.listPets({ limit: 3 })).toEqual(page);
  expect(await client.getPet(1)).toEqual(first);
  expect(client.savedByCache).toBe(3);
  // The three 304s counted nothing.
  expect(client.rateLimit?.remaining).toBe(58);
  expect(sent.map((r) => r.headers.get('if-none-match'))).toEqual([
    null,
    null,
    expect.stringMatching(/^".+"$/),
    expect.stringMatching(/^".+"$/),
    expect.stringMatching(/^".+"$/),
  ]);
  // A page that changed is read again in full: a new order changes the list of orders.
  const orders = await client.listOrders();
  await client.placeOrder({ petId: 1, quantity: 1 });
  expect((await client.listOrders()).data).toHaveLength(orders.data.length + 1);
  expect(client.savedByCache).toBe(3);
});
