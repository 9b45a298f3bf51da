/**
 * Test keys that misbehave on demand (faults/): each fault as a client meets it, counted as the real
 * one would be, and nothing of the kind for a live key.
 */
import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { draw, seeded } from '../../src/faults/draws.js';
import type { FaultProfile } from '../../src/faults/profile.js';
import { json, type TestApp, testApp } from '../helpers/app.js';

let t: TestApp;
afterEach(async () => t.close());

async function testKey(faults?: FaultProfile | Omit<FaultProfile, 'setAt'>): Promise<{ key: string; id: string }> {
  const { key, record } = await t.keys.create({ plan: 'free', test: true, faults });
  return { key, id: record.id };
}
const get = (key: string, prefer?: string, url = '/pets/1') =>
  t.app.inject({ url, headers: { 'x-api-key': key, ...(prefer === undefined ? {} : { prefer }) } });
const used = async (key: string) => json(await get(key, undefined, '/usage')).windows.minute.used as number;

describe('test keys', () => {
  it('are pet_test_… keys with the plans and limits of live keys, and their own orders', async () => {
    t = await testApp();
    const { key } = await testKey();
    expect(key).toMatch(/^pet_test_[A-Za-z0-9_-]{32}$/);
    const answer = await get(key);
    expect(answer.statusCode).toBe(200);
    expect(answer.headers['ratelimit-policy']).toBe('"minute";q=60;w=60, "day";q=1000;w=86400');
    const placed = await t.app.inject({
      method: 'POST',
      url: '/store/orders',
      headers: { 'x-api-key': key },
      payload: { petId: 1, quantity: 1 },
    });
    expect(placed.statusCode).toBe(201);
    const live = await t.newKey('free');
    expect(json(await t.app.inject({ url: '/store/orders', headers: { 'x-api-key': live } })).data).toEqual([]);
    expect(json(await t.app.inject({ url: '/store/orders', headers: { 'x-api-key': key } })).data).toHaveLength(1);
  });

  it('Prefer: fault=503 is a store outage: a 503 problem with Retry-After and the headers, counted', async () => {
    t = await testApp();
    const { key } = await testKey();
    const answer = await get(key, 'fault=503');
    expect(answer.statusCode).toBe(503);
    expect(answer.headers['preference-applied']).toBe('fault=503');
    expect(answer.headers['retry-after']).toBe('5');
    expect(answer.headers['x-ratelimit-remaining']).toBe('59');
    expect(answer.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(json(answer)).toMatchObject({
      type: 'http://petstore.test/problems/service-unavailable',
      status: 503,
      detail: expect.stringMatching(/^Injected for this test key \(Prefer: fault=503\)/),
    });
    expect(await used(key)).toBe(1);
  });

  it('Prefer: fault=500 is a failure: a 500 problem, counted, and no error in the log (nothing failed)', async () => {
    const logLines: string[] = [];
    t = await testApp({ logLines });
    const { key } = await testKey();
    const answer = await get(key, 'fault=500');
    expect(answer.statusCode).toBe(500);
    expect(answer.headers['preference-applied']).toBe('fault=500');
    expect(json(answer)).toMatchObject({ type: 'http://petstore.test/problems/internal-error', status: 500 });
    expect(await used(key)).toBe(1);
    expect(logLines.join('\n')).not.toMatch(/"level":50/);
    expect(logLines.join('\n')).toMatch(/"fault":"500".*"msg":"test key fault"/);
  });

  it('Prefer: fault=429 is a real refusal: real headers and Retry-After, counts nothing, and enough of them start a ban', async () => {
    t = await testApp({ env: { BAN_AFTER_REJECTIONS: '3' } });
    const { key } = await testKey();
    expect((await get(key)).statusCode).toBe(200);
    const refused = await get(key, 'fault=429');
    expect(refused.statusCode).toBe(429);
    expect(refused.headers['preference-applied']).toBe('fault=429');
    // As a real limiter with room would: one second.
    expect(refused.headers['retry-after']).toBe('1');
    expect(refused.headers['x-ratelimit-remaining']).toBe('59');
    expect(refused.headers['cache-control']).toBe('no-store');
    expect(json(refused)).toMatchObject({
      type: 'http://petstore.test/problems/rate-limited',
      window: 'minute',
      limit: 60,
      plan: 'free',
      retryAfter: 1,
    });
    expect(await used(key)).toBe(1);
    // Sent within the wait of the one before: each counts toward a ban (the first followed no other).
    await get(key, 'fault=429');
    await get(key, 'fault=429');
    const fourth = await get(key, 'fault=429');
    expect(fourth.headers['retry-after']).toBe('60');
    // The third counted rejection started a ban: the next request, with no preference at all, is refused.
    const banned = await get(key);
    expect(banned.statusCode).toBe(429);
    expect(json(banned)).toMatchObject({ type: 'http://petstore.test/problems/key-banned' });
    expect(json(await get(key, undefined, '/usage')).ban).toMatchObject({ level: 1 });
    expect(await t.metrics.registry.metrics()).toContain(
      'petstore_ratelimit_refusals_total{kind="rate-limited",plan="free"} 4',
    );
  });

  it('a live key ignores every preference and says nothing of them', async () => {
    t = await testApp();
    const live = await t.newKey('free');
    for (const prefer of ['fault=503', 'fault=500', 'fault=429', 'fault=reset', 'latency=5000']) {
      const answer = await get(live, prefer);
      expect(answer.statusCode, prefer).toBe(200);
      expect(answer.headers['preference-applied'], prefer).toBeUndefined();
    }
  });

  it('ignores what it does not know or cannot honour, and applies the rest', async () => {
    t = await testApp();
    const { key } = await testKey();
    for (const prefer of ['fault=418', 'latency=10001', 'latency=-5', 'return=minimal', 'x'.repeat(5_000)]) {
      const answer = await get(key, prefer);
      expect(answer.statusCode, prefer.slice(0, 20)).toBe(200);
      expect(answer.headers['preference-applied']).toBeUndefined();
    }
    const mixed = await get(key, 'return=minimal, fault=500, fault=503');
    expect(mixed.statusCode).toBe(500);
    expect(mixed.headers['preference-applied']).toBe('fault=500');
  });

  it('applies to requests that count: /usage and the docs answer as ever', async () => {
    t = await testApp();
    const { key } = await testKey();
    for (const url of ['/usage', '/openapi.json', '/']) {
      const answer = await get(key, 'fault=503', url);
      expect(answer.statusCode, url).toBe(200);
      expect(answer.headers['preference-applied'], url).toBeUndefined();
    }
  });

  it('Prefer: latency=<ms> delays the answer by at least that', async () => {
    t = await testApp();
    const { key } = await testKey();
    const started = performance.now();
    const answer = await get(key, 'latency=150');
    expect(performance.now() - started).toBeGreaterThanOrEqual(149);
    expect(answer.statusCode).toBe(200);
    expect(answer.headers['preference-applied']).toBe('latency=150');
  });

  it('a conditional read meets its fault once: one answer, counted', async () => {
    const logLines: string[] = [];
    t = await testApp({ logLines });
    const { key } = await testKey();
    const etag = String((await get(key)).headers.etag);
    for (const fault of ['503', '429']) {
      const answer = await t.app.inject({
        url: '/pets/1',
        headers: { 'x-api-key': key, prefer: `fault=${fault}`, 'if-none-match': etag },
      });
      expect(answer.statusCode).toBe(Number(fault));
    }
    expect(await used(key)).toBe(2);
    expect(logLines.join('\n')).not.toMatch(/already sent|"level":(40|50)/);
  });

  it('a standing profile fails its share of requests from a seeded sequence, and setting it again replays it', async () => {
    t = await testApp();
    const profile = { rate: 0.4, faults: ['503', '500'] as FaultProfile['faults'], latencyMs: null, seed: 1234 };
    const { key, id } = await testKey(profile);
    const statuses = async () => {
      const seen: number[] = [];
      for (let i = 0; i < 30; i++) {
        const answer = await get(key);
        expect(answer.headers['preference-applied']).toBeUndefined();
        seen.push(answer.statusCode);
        t.clock.advance(1_000);
      }
      return seen;
    };
    const first = await statuses();
    // What the seeded sequence says, draw by draw.
    const next = seeded(1234);
    const expected = first.map(() => Number(draw(next, { ...profile, setAt: '' }).fault ?? 200));
    expect(first).toEqual(expected);
    expect(new Set(first)).toEqual(new Set([200, 503, 500]));
    await t.keys.setFaults(id, profile);
    expect(await statuses()).toEqual(first);
    await t.keys.setFaults(id, { ...profile, seed: 4321 });
    expect(await statuses()).not.toEqual(first);
    await t.keys.setFaults(id, null);
    expect(new Set(await statuses())).toEqual(new Set([200]));
  });

  it('a Prefer fault takes the place of what the profile draws, which still moves on', async () => {
    t = await testApp();
    const { key } = await testKey({ rate: 1, faults: ['500'], latencyMs: null, seed: 1 });
    expect((await get(key)).statusCode).toBe(500);
    expect((await get(key, 'fault=503')).statusCode).toBe(503);
  });
});

describe('test keys over a socket', () => {
  async function listening(): Promise<number> {
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    return (t.app.server.address() as AddressInfo).port;
  }
  function send(
    port: number,
    options: { method?: string; path: string; headers: Record<string, string>; body?: string },
  ) {
    return new Promise<{ status: number; headers: Record<string, unknown>; body: string }>((resolve, reject) => {
      const req = httpRequest(
        { host: '127.0.0.1', port, method: options.method ?? 'GET', path: options.path, headers: options.headers },
        (res) => {
          let body = '';
          res.setEncoding('utf8').on('data', (d) => (body += d));
          res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
        },
      );
      req.on('error', reject);
      req.end(options.body);
    });
  }

  it('reach GET /pets/{petId} once memory holds the key and the pet: it meets its fault', async () => {
    t = await testApp();
    const port = await listening();
    const { key } = await testKey();
    expect((await send(port, { path: '/pets/1', headers: { 'x-api-key': key } })).status).toBe(200);
    const failed = await send(port, { path: '/pets/1', headers: { 'x-api-key': key, prefer: 'fault=503' } });
    expect(failed.status).toBe(503);
    expect(failed.headers['preference-applied']).toBe('fault=503');
  });

  it('Prefer: fault=reset handles the request, then resets the connection: the retry with the same Idempotency-Key gets the order', async () => {
    t = await testApp();
    const port = await listening();
    const { key } = await testKey();
    const order = { method: 'POST', path: '/store/orders', body: JSON.stringify({ petId: 1, quantity: 2 }) };
    const headers = { 'x-api-key': key, 'content-type': 'application/json', 'idempotency-key': 'reset-then-retry' };
    await expect(send(port, { ...order, headers: { ...headers, prefer: 'fault=reset' } })).rejects.toMatchObject({
      code: 'ECONNRESET',
    });
    const retried = await send(port, { ...order, headers });
    expect(retried.status).toBe(201);
    expect(retried.headers['idempotent-replayed']).toBe('true');
    const orders = JSON.parse((await send(port, { path: '/store/orders', headers: { 'x-api-key': key } })).body).data;
    expect(orders).toEqual([JSON.parse(retried.body)]);
  });
});

describe('the admin API', () => {
  const TOKEN = 'admin-token-for-tests-0123456789';
  const admin = (method: 'POST' | 'PUT' | 'DELETE', url: string, payload?: object) =>
    t.admin.inject({ method, url, headers: { authorization: `Bearer ${TOKEN}` }, payload });

  it('creates test keys with a profile, sets it again and removes it; a live key takes none', async () => {
    t = await testApp({ env: { ADMIN_TOKEN: TOKEN } });
    const created = await admin('POST', '/admin/keys', {
      plan: 'pro',
      test: true,
      faults: { rate: 0.05, latencyMs: { min: 50, max: 400 }, seed: 7 },
    });
    expect(created.statusCode).toBe(201);
    const view = json(created);
    expect(view.key).toMatch(/^pet_test_/);
    expect(view.prefix).toMatch(/^pet_test_.{4}…$/);
    expect(view).toMatchObject({
      test: true,
      faults: { rate: 0.05, faults: ['503', '500', '429', 'reset'], latencyMs: { min: 50, max: 400 }, seed: 7 },
    });
    const set = await admin('PUT', `/admin/keys/${view.id}/faults`, { rate: 1, faults: ['429'] });
    expect(json(set).faults).toMatchObject({ rate: 1, faults: ['429'], latencyMs: null, seed: expect.any(Number) });
    expect((await get(view.key)).statusCode).toBe(429);
    expect(json(await admin('DELETE', `/admin/keys/${view.id}/faults`)).faults).toBeNull();
    expect((await get(view.key)).statusCode).toBe(200);

    const live = json(await admin('POST', '/admin/keys', { plan: 'free' }));
    expect(live).toMatchObject({ test: false, faults: null });
    expect(live.key).not.toMatch(/^pet_test_/);
    const refused = await admin('PUT', `/admin/keys/${live.id}/faults`, { rate: 0.5 });
    expect(refused.statusCode).toBe(400);
    expect(json(refused).detail).toMatch(/only test keys/);
    expect((await admin('POST', '/admin/keys', { plan: 'free', faults: { rate: 0.5 } })).statusCode).toBe(400);
  });

  it.each([
    [{ rate: 2 }, '/rate'],
    [{ rate: 0.1, faults: ['404'] }, '/faults/0'],
    [{ rate: 0.1, latencyMs: { min: 400, max: 50 } }, '/faults/latencyMs'],
    [{ rate: 0.1, latencyMs: { min: 0, max: 60_000 } }, '/faults/latencyMs'],
    [{ rate: 0.1, surprise: true }, ''],
  ])('refuses the profile %j with a 400 naming it, and changes nothing', async (faults, name) => {
    t = await testApp({ env: { ADMIN_TOKEN: TOKEN } });
    const { id } = await testKey();
    const answer = await admin('PUT', `/admin/keys/${id}/faults`, faults);
    expect(answer.statusCode).toBe(400);
    if (name) expect(JSON.stringify(json(answer).errors)).toContain(name);
    expect((await t.keys.get(id))!.faults).toBeNull();
  });
});
