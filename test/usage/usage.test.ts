import { afterEach, describe, expect, it } from 'vitest';
import { UNCOUNTED_POLICY } from '../../src/ratelimit/plans.js';
import { json, type TestApp, testApp } from '../helpers/app.js';

let t: TestApp;
afterEach(async () => t.close());

const usageOf = (key: string) => t.app.inject({ url: '/usage', headers: { 'x-api-key': key } });

describe('GET /usage', () => {
  it("answers the plan, both windows and today's count, and counts nothing itself", async () => {
    t = await testApp();
    const key = await t.newKey('free');
    const fresh = await usageOf(key);
    expect(fresh.statusCode).toBe(200);
    expect(json(fresh)).toEqual({
      plan: 'free',
      windows: {
        minute: {
          limit: 60,
          used: 0,
          remaining: 60,
          nextSlotAt: '2026-11-21T12:00:00.000Z',
          resetsAt: '2026-11-21T12:00:00.000Z',
        },
        day: {
          limit: 1000,
          used: 0,
          remaining: 1000,
          nextSlotAt: '2026-11-21T12:00:00.000Z',
          resetsAt: '2026-11-22T00:00:00.000Z',
        },
      },
      ban: null,
      today: 0,
    });
    for (let i = 0; i < 3; i++) {
      expect((await t.app.inject({ url: '/pets', headers: { 'x-api-key': key } })).statusCode).toBe(200);
      t.clock.advance(1_000);
    }
    for (let i = 0; i < 5; i++) await usageOf(key);
    const after = await usageOf(key);
    // Three requests counted, none of the six /usage ones: the headers say the same.
    expect(json(after)).toMatchObject({
      windows: { minute: { used: 3, remaining: 57 }, day: { used: 3, remaining: 997 } },
      today: 3,
    });
    expect(after.headers['x-ratelimit-remaining']).toBe('57');
    expect(json(after).windows.minute.resetsAt).toBe('2026-11-21T12:01:02.000Z');
  });

  it('tells when the next slot frees once a window is used up', async () => {
    t = await testApp();
    const key = await t.newKey({ plan: 'enterprise', perMinute: 2, perDay: 100 });
    for (let i = 0; i < 2; i++) {
      await t.app.inject({ url: '/pets', headers: { 'x-api-key': key } });
      t.clock.advance(10_000);
    }
    const usage = json(await usageOf(key));
    expect(usage.plan).toBe('enterprise');
    expect(usage.windows.minute).toEqual({
      limit: 2,
      used: 2,
      remaining: 0,
      nextSlotAt: '2026-11-21T12:01:00.000Z',
      resetsAt: '2026-11-21T12:01:10.000Z',
    });
    expect(usage.windows.day).toMatchObject({ used: 2, remaining: 98, nextSlotAt: '2026-11-21T12:00:20.000Z' });
  });

  it('shows the ban in force and its level, and still answers 200 during it', async () => {
    t = await testApp({ env: { BAN_AFTER_REJECTIONS: '3' } });
    const key = await t.newKey({ plan: 'enterprise', perMinute: 1, perDay: 100 });
    const get = () => t.app.inject({ url: '/pets', headers: { 'x-api-key': key } });
    for (let i = 0; i < 4; i++) await get();
    expect((await get()).statusCode).toBe(429);
    const during = await usageOf(key);
    expect(during.statusCode).toBe(200);
    expect(during.headers['x-ratelimit-remaining']).toBe('0');
    const { ban } = json(during);
    expect(ban).toEqual({ until: expect.any(String), level: 1 });
    expect(Date.parse(ban.until)).toBe(Number(during.headers['x-ratelimit-reset']) * 1000);
  });

  it('needs a valid key: without one, a 401 problem with the address headers', async () => {
    t = await testApp();
    const none = await t.app.inject({ url: '/usage' });
    expect(none.statusCode).toBe(401);
    expect(none.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(none.headers['x-ratelimit-limit']).toBeDefined();
  });

  it('is throttled per key by the uncounted policy, as the documentation is', async () => {
    t = await testApp();
    const key = await t.newKey({ plan: 'enterprise', perMinute: 100_000, perDay: 100_000 });
    for (let i = 0; i < UNCOUNTED_POLICY.perMinute; i++) expect((await usageOf(key)).statusCode).toBe(200);
    const throttled = await usageOf(key);
    expect(throttled.statusCode).toBe(429);
    expect(throttled.headers['retry-after']).toBeDefined();
    expect(json(throttled)).toMatchObject({ code: 'uncounted-throttled', policy: 'uncounted' });
  });
});
