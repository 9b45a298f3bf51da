import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, type TestApp, testApp } from '../helpers/app.js';
import { expectProblem } from '../helpers/orders.js';

/**
 * A test key's own clock (docs/testing-clients.md#testing-your-client-in-seconds):
 * `GET /test-clock`, advance, freeze, resume, and the limits that follow it.
 */

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(async () => {
  await t.close();
});

const as = (key: string, extra: Record<string, string> = {}) => ({ 'x-api-key': key, ...extra });
const getClock = async (key: string) =>
  json<{ now: string; offsetSeconds: number; frozen: boolean }>(
    await t.request({ url: '/test-clock', headers: as(key) }),
  );
const move = (
  key: string,
  how: 'advance' | 'freeze' | 'resume',
  payload?: object,
  headers: Record<string, string> = {},
) =>
  t.request({ method: 'POST', url: `/test-clock/${how}`, headers: as(key, headers), ...(payload ? { payload } : {}) });
const pets = (key: string) => t.request({ url: '/pets?limit=1', headers: as(key) });
const realNow = () => new Date(t.clock()).toISOString();

describe("a test key's clock", () => {
  it('starts at the real time, running, and moves forward by seconds or to an instant', async () => {
    const key = await t.newKey({ plan: 'free', test: true });
    expect(await getClock(key)).toEqual({ now: realNow(), offsetSeconds: 0, frozen: false });
    const advanced = await move(key, 'advance', { seconds: 90 });
    expect(advanced.statusCode).toBe(200);
    const at = t.clock() + 90_000;
    expect(json(advanced)).toEqual({ now: new Date(at).toISOString(), offsetSeconds: 90, frozen: false });
    t.clock.advance(10_000);
    expect(await getClock(key)).toEqual({ now: new Date(at + 10_000).toISOString(), offsetSeconds: 90, frozen: false });
    const to = new Date(at + 10_000 + 3_600_000).toISOString();
    expect(json(await move(key, 'advance', { to }))).toEqual({ now: to, offsetSeconds: 3_690, frozen: false });
    // Another test key's clock, and every live key's time, are untouched.
    expect((await getClock(await t.newKey({ plan: 'free', test: true }))).offsetSeconds).toBe(0);
  });

  it('stands still while frozen, moves only by advance, and runs on from where it stood once resumed', async () => {
    const key = await t.newKey({ plan: 'free', test: true });
    const frozenAt = t.clock();
    expect(json(await move(key, 'freeze'))).toEqual({
      now: new Date(frozenAt).toISOString(),
      offsetSeconds: 0,
      frozen: true,
    });
    t.clock.advance(30_000);
    expect(await getClock(key)).toEqual({ now: new Date(frozenAt).toISOString(), offsetSeconds: -30, frozen: true });
    expect(json(await move(key, 'freeze'))).toMatchObject({ now: new Date(frozenAt).toISOString(), frozen: true });
    expect(json(await move(key, 'advance', { seconds: 5 }))).toEqual({
      now: new Date(frozenAt + 5_000).toISOString(),
      offsetSeconds: -25,
      frozen: true,
    });
    expect(json(await move(key, 'resume'))).toEqual({
      now: new Date(frozenAt + 5_000).toISOString(),
      offsetSeconds: -25,
      frozen: false,
    });
    t.clock.advance(1_000);
    expect(await getClock(key)).toEqual({
      now: new Date(frozenAt + 6_000).toISOString(),
      offsetSeconds: -25,
      frozen: false,
    });
    expect(json(await move(key, 'resume'))).toMatchObject({ offsetSeconds: -25, frozen: false });
  });

  it('refuses to go back (409), beyond two years or a body that is not one of seconds and to (400), and then has not moved', async () => {
    const key = await t.newKey({ plan: 'free', test: true });
    await move(key, 'advance', { seconds: 60 });
    const before = await getClock(key);
    const back = await move(key, 'advance', { to: realNow() });
    expectProblem(back, 409, 'clock-cannot-go-back');
    expect(json<{ detail: string }>(back).detail).toContain(before.now);
    const beyond = new Date(Date.parse(before.now) + 732 * 86_400_000).toISOString();
    for (const payload of [
      { to: beyond },
      { seconds: 732 * 86_400 },
      {},
      { seconds: 1, to: before.now },
      { seconds: 0 },
      { seconds: 1.5 },
      { seconds: '60' },
      { to: 'tomorrow' },
      { days: 1 },
    ]) {
      expectProblem(await move(key, 'advance', payload), 400, 'invalid-request');
    }
    expect(await getClock(key)).toEqual(before);
    // Two years is allowed.
    expect((await move(key, 'advance', { seconds: 731 * 86_400 })).statusCode).toBe(200);
  });

  it('is for test keys only: a live key gets 403 test-key-required, and no key 401', async () => {
    const live = await t.newKey('free');
    for (const sent of [
      () => t.request({ url: '/test-clock', headers: as(live) }),
      () => move(live, 'advance', { seconds: 1 }),
      () => move(live, 'freeze'),
      () => move(live, 'resume'),
    ]) {
      expectProblem(await sent(), 403, 'test-key-required');
    }
    expectProblem(await t.request({ url: '/test-clock' }), 401, 'unauthorized');
  });

  it('counts nothing, carries the headers, and answers during a ban', async () => {
    const key = await t.newKey({ plan: 'free', test: true });
    const remaining = (await pets(key)).headers['x-ratelimit-remaining'];
    for (const sent of [
      () => t.request({ url: '/test-clock', headers: as(key) }),
      () => move(key, 'freeze'),
      () => move(key, 'resume'),
    ]) {
      const answer = await sent();
      expect(answer.statusCode).toBe(200);
      expect(answer.headers['x-ratelimit-remaining']).toBe(remaining);
    }
    // Banned: 60 admitted, then refusals sent within the wait of the one before start a ban.
    let last = await pets(key);
    for (let i = 0; i < 80 && last.headers['retry-after'] === undefined; i++) last = await pets(key);
    for (let i = 0; i < 15; i++) last = await pets(key);
    expectProblem(last, 429, 'key-banned');
    expect((await t.request({ url: '/test-clock', headers: as(key) })).statusCode).toBe(200);
    expect((await move(key, 'advance', { seconds: 1 })).statusCode).toBe(200);
  });

  it('honours Idempotency-Key: a replay answers as the first time and does not move the clock again', async () => {
    const key = await t.newKey({ plan: 'free', test: true });
    const first = await move(key, 'advance', { seconds: 60 }, { 'idempotency-key': 'advance-once' });
    const again = await move(key, 'advance', { seconds: 60 }, { 'idempotency-key': 'advance-once' });
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(json(again)).toEqual(json(first));
    expect((await getClock(key)).offsetSeconds).toBe(60);
  });
});

describe("a test key's limits follow its clock", () => {
  it('a free test key refused after 60 requests is admitted once it advances Retry-After seconds; the waits are in its time, X-RateLimit-Reset in the real time', async () => {
    const key = await t.newKey({ plan: 'free', test: true });
    await move(key, 'freeze');
    await move(key, 'advance', { seconds: 3_600 });
    for (let i = 0; i < 60; i++) expect((await pets(key)).statusCode).toBe(200);
    const refused = await pets(key);
    expectProblem(refused, 429, 'rate-limited');
    const wait = Number(refused.headers['retry-after']);
    // The key's clock stands still: the wait is the whole minute, in its time, however long the real one runs.
    expect(wait).toBe(60);
    t.clock.advance(120_000);
    const still = await pets(key);
    expect(still.statusCode).toBe(429);
    expect(still.headers['retry-after']).toBe('60');
    expect(String(still.headers.ratelimit)).toContain('"minute";r=0;t=60');
    expect(Number(still.headers['x-ratelimit-reset'])).toBe(Math.ceil(t.clock() / 1000) + 60);
    await move(key, 'advance', { seconds: wait });
    expect((await pets(key)).statusCode).toBe(200);
  });

  it("empties the day window at the key's next UTC midnight", async () => {
    const key = await t.newKey({ plan: 'free', test: true });
    const clock = await getClock(key);
    // Just after a midnight in the key's time, with a minute's room every time.
    const midnight = (Math.floor(Date.parse(clock.now) / 86_400_000) + 1) * 86_400_000;
    await move(key, 'freeze');
    await move(key, 'advance', { to: new Date(midnight + 1_000).toISOString() });
    for (let sent = 0; sent < 1_000; sent++) {
      if (sent > 0 && sent % 60 === 0) await move(key, 'advance', { seconds: 60 });
      expect((await pets(key)).statusCode).toBe(200);
    }
    await move(key, 'advance', { seconds: 60 });
    const refused = await pets(key);
    expectProblem(refused, 429, 'rate-limited');
    expect(json<{ window: string }>(refused).window).toBe('day');
    await move(key, 'advance', { to: new Date(midnight + 86_400_000).toISOString() });
    const admitted = await pets(key);
    expect(admitted.statusCode).toBe(200);
    expect(admitted.headers['x-ratelimit-remaining']).toBe('59');
  });

  it('ends a ban when the clock passes it, and doubles the next within 24 h of its time, not after', async () => {
    const key = await t.newKey({ plan: 'free', test: true });
    await move(key, 'freeze');
    const ban = async () => {
      let last = await pets(key);
      for (let i = 0; i < 100 && last.headers['content-type']?.toString().includes('problem') !== true; i++)
        last = await pets(key);
      for (let i = 0; i < 11; i++) last = await pets(key);
      expectProblem(last, 429, 'key-banned');
      return json<{ bannedUntil: string; retryAfter: number }>(last);
    };
    const first = await ban();
    expect(first.retryAfter).toBe(60);
    await move(key, 'advance', { to: first.bannedUntil });
    expect((await pets(key)).statusCode).toBe(200);
    // The next ban soon after is doubled.
    await move(key, 'advance', { seconds: 60 });
    const second = await ban();
    expect(second.retryAfter).toBe(120);
    // 24 h after the last ban ended, in the key's time, the memory has gone: a first ban again.
    await move(key, 'advance', { to: new Date(Date.parse(second.bannedUntil) + 86_400_000).toISOString() });
    expect((await pets(key)).statusCode).toBe(200);
    await move(key, 'advance', { seconds: 60 });
    expect((await ban()).retryAfter).toBe(60);
  });

  it("leaves a live key on the real time: its windows and a test key's are apart", async () => {
    const live = await t.newKey('free');
    const key = await t.newKey({ plan: 'free', test: true });
    for (let i = 0; i < 60; i++) await pets(live);
    expect((await pets(live)).statusCode).toBe(429);
    await move(key, 'advance', { seconds: 3_600 });
    expect((await pets(live)).statusCode).toBe(429);
    expect((await pets(key)).statusCode).toBe(200);
  });
});

describe("a test key's /usage is in its time", () => {
  it('shows the ban in force by the key’s clock, and none once the clock passed it', async () => {
    const key = await t.newKey({ plan: 'free', test: true });
    await move(key, 'freeze');
    let last = await pets(key);
    for (let i = 0; i < 100 && last.statusCode !== 429; i++) last = await pets(key);
    for (let i = 0; i < 11; i++) last = await pets(key);
    expectProblem(last, 429, 'key-banned');
    const { bannedUntil } = json<{ bannedUntil: string }>(last);
    const usage = async () =>
      json<{ ban: { until: string } | null; windows: { minute: { resetsAt: string } } }>(
        await t.request({ url: '/usage', headers: as(key) }),
      );
    expect((await usage()).ban?.until).toBe(bannedUntil);
    // The real time passing changes nothing for a frozen clock.
    t.clock.advance(3_600_000);
    expect((await usage()).ban?.until).toBe(bannedUntil);
    await move(key, 'advance', { to: bannedUntil });
    expect((await usage()).ban).toBeNull();
  });
});
