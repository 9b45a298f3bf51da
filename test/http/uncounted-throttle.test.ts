import { afterEach, describe, expect, it } from 'vitest';
import { UNCOUNTED_POLICY } from '../../src/ratelimit/plans.js';
import { json, type TestApp, testApp } from '../helpers/app.js';

/**
 * The paths that count toward no plan (the docs, the document, `/usage`, a test key's clock, reset and
 * card…) are throttled by a policy of their own (docs/rate-limits.md#uncounted-paths): per key where a
 * valid key is sent, per address otherwise, so that one CI machine driving many test keys spends no
 * shared allowance and one key's flood never refuses another key. Its refusal is a `429` of problem
 * type `uncounted-throttled`, never a ban.
 */

let t: TestApp;
afterEach(async () => t?.close());

const ADDRESS = '203.0.113.20';

describe('the uncounted policy', () => {
  it('is generous: at least 600 a minute', () => {
    expect(UNCOUNTED_POLICY.perMinute).toBeGreaterThanOrEqual(600);
  });

  it('throttles per key: one key past it is refused, another key from the same address is not, and neither is banned', async () => {
    t = await testApp();
    const [flooder, other] = [
      await t.newKey({ plan: 'free', test: true }),
      await t.newKey({ plan: 'free', test: true }),
    ];
    const clockOf = (key: string) =>
      t.request({ url: '/test-clock', remoteAddress: ADDRESS, headers: { 'x-api-key': key } });
    for (let i = 0; i < UNCOUNTED_POLICY.perMinute; i++) expect((await clockOf(flooder)).statusCode).toBe(200);
    for (let i = 0; i < 20; i++) {
      const refused = await clockOf(flooder);
      expect(refused.statusCode).toBe(429);
      expect(json(refused)).toMatchObject({
        type: 'http://petstore.test/problems/uncounted-throttled',
        status: 429,
        policy: 'uncounted',
        window: 'minute',
        limit: UNCOUNTED_POLICY.perMinute,
        retryAfter: 60,
      });
      expect(refused.headers['retry-after']).toBe('60');
      expect(refused.headers['x-ratelimit-limit']).toBe(String(UNCOUNTED_POLICY.perMinute));
    }
    // Another key from the same address: its own allowance, whole.
    expect((await clockOf(other)).statusCode).toBe(200);
    // The flooding key is throttled on those paths only: its API requests still go, with its own headers, unbanned.
    const api = await t.request({ url: '/pets', remoteAddress: ADDRESS, headers: { 'x-api-key': flooder } });
    expect(api.statusCode).toBe(200);
    expect(api.headers['x-ratelimit-remaining']).toBe('59');
    const usage = await t.request({ url: '/usage', remoteAddress: '203.0.113.21', headers: { 'x-api-key': other } });
    expect(json(usage)).toMatchObject({ ban: null });
    // A minute later the clock answers the flooder again.
    t.clock.advance(60_000);
    expect((await clockOf(flooder)).statusCode).toBe(200);
  });

  it('spends nothing shared: eight child keys of one CI machine read their clocks 200 times each', async () => {
    t = await testApp();
    const keys = await Promise.all(Array.from({ length: 8 }, () => t.newKey({ plan: 'free', test: true })));
    for (let round = 0; round < 200; round++) {
      for (const key of keys) {
        const answer = await t.request({ url: '/test-clock', remoteAddress: ADDRESS, headers: { 'x-api-key': key } });
        expect(answer.statusCode).toBe(200);
      }
    }
  });

  it('throttles per address where no key is sent: the document past it is refused with the same problem', async () => {
    t = await testApp();
    const docs = (remoteAddress: string) => t.request({ url: '/openapi.json', remoteAddress });
    for (let i = 0; i < UNCOUNTED_POLICY.perMinute; i++) expect((await docs(ADDRESS)).statusCode).toBe(200);
    const refused = await docs(ADDRESS);
    expect(refused.statusCode).toBe(429);
    expect(json(refused)).toMatchObject({
      type: 'http://petstore.test/problems/uncounted-throttled',
      policy: 'uncounted',
    });
    expect((await docs('203.0.113.22')).statusCode).toBe(200);
  });

  it('has a page that explains it', async () => {
    t = await testApp();
    const page = await t.request({ url: '/problems/uncounted-throttled' });
    expect(page.statusCode).toBe(200);
    expect(page.body).toMatch(/600/);
  });
});
