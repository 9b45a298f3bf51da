import type { LightMyRequestResponse } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { json, type TestApp, testApp } from '../helpers/app.js';

let t: TestApp;
afterEach(async () => t.close());

const TOKEN = 'admin-token-for-tests-0123456789';

async function exhaustMinute(get: () => Promise<LightMyRequestResponse>, n: number) {
  for (let i = 0; i < n; i++) expect((await get()).statusCode).toBe(200);
}

describe('429 rate-limited', () => {
  it('has Retry-After, Cache-Control: no-store and a rate-limited problem; waiting exactly Retry-After is admitted', async () => {
    t = await testApp();
    const key = await t.newKey('free');
    const get = () => t.app.inject({ url: '/pets', headers: { 'x-api-key': key } });
    await exhaustMinute(get, 60);
    t.clock.advance(12_345);
    const refused = await get();
    expect(refused.statusCode).toBe(429);
    expect(refused.headers['retry-after']).toBe('48');
    expect(refused.headers['cache-control']).toBe('no-store');
    expect(refused.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(refused.headers['x-ratelimit-remaining']).toBe('0');
    expect(json(refused)).toMatchObject({
      type: 'http://petstore.test/problems/rate-limited',
      status: 429,
      window: 'minute',
      limit: 60,
      plan: 'free',
      retryAfter: 48,
      instance: '/pets',
    });
    t.clock.advance(48_000);
    expect((await get()).statusCode).toBe(200);
  });

  it("a refusal's body follows whatever changes in it: the path, the plan, the limit, the second, the ban", async () => {
    t = await testApp();
    const get = (key: string, url = '/pets') => t.app.inject({ url, headers: { 'x-api-key': key } });
    const refusal = async (key: string, url = '/pets') => json(await get(key, url)) as Record<string, unknown>;
    const free = await t.newKey('free');
    // The free plan's numbers on another plan: only the plan's name tells their refusals apart.
    const sameLimits = await t.newKey({ plan: 'enterprise', perMinute: 60, perDay: 1000 });
    const small = await t.newKey({ plan: 'enterprise', perMinute: 2, perDay: 1000 });
    for (const [key, n] of [
      [free, 60],
      [sameLimits, 60],
      [small, 2],
    ] as const)
      await exhaustMinute(() => get(key), n);
    expect(await refusal(free)).toMatchObject({ plan: 'free', limit: 60, retryAfter: 60, instance: '/pets' });
    expect(await refusal(free, '/pets/1?')).toMatchObject({ instance: '/pets/1' });
    expect(await refusal(free)).toMatchObject({ instance: '/pets' });
    expect(await refusal(sameLimits)).toMatchObject({ plan: 'enterprise', limit: 60 });
    expect(await refusal(small)).toMatchObject({ plan: 'enterprise', limit: 2, retryAfter: 60 });
    t.clock.advance(1_000);
    expect(await refusal(small)).toMatchObject({ limit: 2, retryAfter: 59 });

    // Two bans that end 300 ms apart: the same Retry-After, not the same end.
    const banned = [await t.newKey('free'), await t.newKey('free')];
    for (const key of banned) {
      await exhaustMinute(() => get(key), 60);
      // The first 429 follows no other; the ten after it, sent within its wait, start the ban.
      for (let i = 0; i < 11; i++) await get(key);
      t.clock.advance(300);
    }
    const [first, second] = [await refusal(banned[0]!), await refusal(banned[1]!)];
    expect(first).toMatchObject({ type: 'http://petstore.test/problems/key-banned', retryAfter: 60 });
    expect(second).toMatchObject({ type: 'http://petstore.test/problems/key-banned', retryAfter: 60 });
    expect(first.bannedUntil).not.toBe(second.bannedUntil);
    t.clock.advance(1_000);
    expect(await refusal(banned[0]!)).toMatchObject({ retryAfter: 59, bannedUntil: first.bannedUntil });
  });

  it('a rejected request counts in neither window', async () => {
    t = await testApp();
    const key = await t.newKey({ plan: 'enterprise', perMinute: 3, perDay: 5 });
    const get = () => t.app.inject({ url: '/pets', headers: { 'x-api-key': key } });
    await exhaustMinute(get, 3);
    for (let i = 0; i < 5; i++) expect((await get()).statusCode).toBe(429);
    t.clock.advance(60_000);
    // Had the five refusals counted in the day, nothing would be left now.
    // (`t`: the minute runs 60 s from its one counted request; the day, 12 h less a minute, to midnight.)
    expect((await get()).headers.ratelimit).toBe('"minute";r=2;t=60, "day";r=1;t=43140');
  });

  it('refuses by the day window when the day is used up, until 00:00:00 UTC', async () => {
    t = await testApp();
    t.clock.set('2026-11-21T23:58:00Z');
    const key = await t.newKey({ plan: 'enterprise', perMinute: 100, perDay: 3 });
    const get = () => t.app.inject({ url: '/pets', headers: { 'x-api-key': key } });
    await exhaustMinute(get, 3);
    const refused = await get();
    expect(json(refused)).toMatchObject({ window: 'day', limit: 3, plan: 'enterprise', retryAfter: 120 });
    t.clock.set('2026-11-21T23:59:59.999Z');
    expect((await get()).statusCode).toBe(429);
    t.clock.set('2026-11-22T00:00:00.000Z');
    expect((await get()).statusCode).toBe(200);
  });

  it('a plan change applies from the next request, and what was counted stays counted', async () => {
    t = await testApp({ env: { ADMIN_TOKEN: TOKEN } });
    const { record, key } = await t.keys.create({ plan: 'free' });
    const get = () => t.app.inject({ url: '/pets', headers: { 'x-api-key': key } });
    await exhaustMinute(get, 60);
    expect((await get()).statusCode).toBe(429);
    const patched = await t.admin.inject({
      method: 'PATCH',
      url: `/admin/keys/${record.id}`,
      headers: { authorization: `Bearer ${TOKEN}` },
      payload: { plan: 'pro' },
    });
    expect(patched.statusCode).toBe(200);
    const next = await get();
    expect(next.statusCode).toBe(200);
    expect(next.headers['x-ratelimit-limit']).toBe('300');
    expect(next.headers['x-ratelimit-remaining']).toBe('239');
  });
});

describe('temporary bans', () => {
  async function banned(env: Record<string, string> = {}) {
    const lines: string[] = [];
    t = await testApp({ env: { ADMIN_TOKEN: TOKEN, ...env }, logLines: lines });
    const { record, key } = await t.keys.create({ plan: 'free' });
    const get = () => t.app.inject({ url: '/pets', headers: { 'x-api-key': key } });
    await exhaustMinute(get, 60);
    // The first 429 follows no other; each of the next ten comes before the wait it was told.
    for (let i = 0; i < 11; i++) expect(json(await get()).type).toMatch(/rate-limited$/);
    return { record, key, get, lines };
  }

  it('10 rate-limited requests within 60 s, each before the previous Retry-After, ban the key for 60 s', async () => {
    const { get, lines, record } = await banned();
    const bannedAt = t.clock();
    const refused = await get();
    expect(refused.statusCode).toBe(429);
    expect(refused.headers['retry-after']).toBe('60');
    expect(refused.headers['cache-control']).toBe('no-store');
    expect(refused.headers['x-ratelimit-remaining']).toBe('0');
    expect(refused.headers['x-ratelimit-reset']).toBe(String(Math.ceil((bannedAt + 60_000) / 1000)));
    expect(json(refused)).toMatchObject({
      type: 'http://petstore.test/problems/key-banned',
      status: 429,
      retryAfter: 60,
    });

    const banLines = lines.map((l) => JSON.parse(l)).filter((l) => l.msg === 'caller banned');
    expect(banLines).toEqual([expect.objectContaining({ caller: `key:${record.id}`, plan: 'free', banSeconds: 60 })]);
    const metrics = (await t.admin.inject({ url: '/metrics' })).body;
    expect(metrics).toContain('petstore_ratelimit_bans_total{plan="free"} 1');
    const view = json(
      await t.admin.inject({ url: `/admin/keys/${record.id}`, headers: { authorization: `Bearer ${TOKEN}` } }),
    );
    expect(view.ban).toEqual({ until: new Date(bannedAt + 60_000).toISOString(), level: 1 });
    expect(lines.join('\n')).not.toMatch(/pet_[A-Za-z0-9_-]{8}/);
  });

  it('the 429 that starts a ban tells its end: waiting that Retry-After is admitted', async () => {
    t = await testApp();
    const key = await t.newKey('free');
    const get = () => t.app.inject({ url: '/pets', headers: { 'x-api-key': key } });
    await exhaustMinute(get, 60);
    t.clock.advance(25_000);
    const refusals = [];
    for (let i = 0; i < 11; i++) refusals.push(await get());
    // The first ten wait for the minute's oldest request to leave (35 s); the eleventh, the tenth sent
    // within the wait it was told, starts a 60 s ban.
    expect(refusals.slice(0, 10).map((r) => r.headers['retry-after'])).toEqual(Array(10).fill('35'));
    const last = refusals[10]!;
    expect(json(last)).toMatchObject({ type: 'http://petstore.test/problems/rate-limited', retryAfter: 60 });
    expect(last.headers['retry-after']).toBe('60');
    t.clock.advance(35_000);
    expect(json(await get()).type).toMatch(/key-banned$/);
    t.clock.advance(25_000);
    expect((await get()).statusCode).toBe(200);
  });

  it('requests during a ban count nowhere and do not extend it', async () => {
    const { get } = await banned();
    for (let i = 0; i < 30; i++) {
      t.clock.advance(1_000);
      expect(json(await get()).type).toMatch(/key-banned$/);
    }
    t.clock.advance(30_000);
    const after = await get();
    expect(after.statusCode).toBe(200);
    // 60 counted before the ban, all older than 60 s now: the ban's requests left no trace.
    expect(after.headers.ratelimit).toBe('"minute";r=59;t=60, "day";r=939;t=43140');
  });

  it('the admin API lifts a ban at once', async () => {
    const { get, record } = await banned();
    expect(json(await get()).type).toMatch(/key-banned$/);
    const lifted = await t.admin.inject({
      method: 'POST',
      url: `/admin/keys/${record.id}/unban`,
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    expect(json(lifted).ban).toBeNull();
    // Still over the minute limit, so rate limited, but no longer banned.
    expect(json(await get()).type).toMatch(/rate-limited$/);
  });

  it("an unban written by another process (the CLI) is applied on the key's next request", async () => {
    const { get, record } = await banned();
    expect(json(await get()).type).toMatch(/key-banned$/);
    await t.keys.requestUnban(record.id);
    // The admin view already shows it lifted, before any request has applied it.
    const view = await t.admin.inject({
      url: `/admin/keys/${record.id}`,
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    expect(json(view).ban).toBeNull();
    expect(json(await get()).type).toMatch(/rate-limited$/);
  });

  it('thresholds are configuration', async () => {
    const { get } = await banned({ BAN_AFTER_REJECTIONS: '20', BAN_FIRST_SECONDS: '30' });
    // Ten counted so far: nine more, and the twentieth starts the ban.
    for (let i = 0; i < 9; i++) expect(json(await get()).type).toMatch(/rate-limited$/);
    const last = await get();
    expect(json(last).type).toMatch(/rate-limited$/);
    expect(json(await get())).toMatchObject({ type: 'http://petstore.test/problems/key-banned', retryAfter: 30 });
  });
});
