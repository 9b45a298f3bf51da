/** The rate-limit state of each response, as the client exposes it. */
import { afterEach, expect, it } from 'vitest';
import { PetstoreClient, type RateLimitState } from '../../client/index.js';
import { parseRateLimit } from '../../client/rate-limit.js';
import { testApp, type TestApp } from '../helpers/app.js';
import { clientOptions } from './harness.js';

let t: TestApp;
afterEach(async () => t.close());

it('exposes every response’s state: both windows with their quotas, and the binding window', async () => {
  t = await testApp();
  const key = await t.newKey('free');
  const states: RateLimitState[] = [];
  const client = new PetstoreClient({ ...clientOptions(t.app, t.clock, key), onResponse: (e) => states.push(e.rateLimit) });
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
  expect(parseRateLimit(new Headers({ 'retry-after': 'Sat, 21 Nov 2026 12:01:30 GMT' }), at).retryAfterSeconds).toBe(90);
});
