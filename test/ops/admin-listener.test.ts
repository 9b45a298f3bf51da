import { afterEach, describe, expect, it } from 'vitest';
import { type AdminMethod, adminRequest, ADMIN_TOKEN as TOKEN } from '../helpers/admin.js';
import { json, type TestApp, testApp } from '../helpers/app.js';

let t: TestApp;
afterEach(async () => t.close());

describe('admin listener: health, readiness, metrics', () => {
  it('/healthz answers ok and /readyz answers ready while the store answers', async () => {
    t = await testApp();
    expect(json(await t.admin.inject({ url: '/healthz' }))).toEqual({ status: 'ok' });
    const ready = await t.admin.inject({ url: '/readyz' });
    expect(ready.statusCode).toBe(200);
    expect(json(ready)).toEqual({
      status: 'ready',
      checks: { database: true },
      limiter: { configured: 'memory', deciding: 'memory' },
    });
  });

  it('/readyz fails with 503 when the store does not answer', async () => {
    t = await testApp();
    await t.db.destroy();
    const ready = await t.admin.inject({ url: '/readyz' });
    expect(ready.statusCode).toBe(503);
    expect(json(ready)).toMatchObject({ status: 'unavailable', checks: { database: false } });
  });

  it('/metrics counts public requests by route and status, with a latency histogram', async () => {
    t = await testApp();
    const key = await t.newKey('free');
    await t.app.inject({ url: '/pets/1', headers: { 'x-api-key': key } });
    await t.app.inject({ url: '/pets/999', headers: { 'x-api-key': key } });
    await t.app.inject({ url: '/nowhere' });
    const metrics = await t.admin.inject({ url: '/metrics' });
    expect(metrics.headers['content-type']).toMatch(/^text\/plain/);
    expect(metrics.body).toContain('petstore_http_requests_total{method="GET",route="/pets/:petId",status="200"} 1');
    expect(metrics.body).toContain('petstore_http_requests_total{method="GET",route="/pets/:petId",status="404"} 1');
    expect(metrics.body).toMatch(/petstore_http_requests_total\{method="GET",route="[^"]*",status="404"\} 1/);
    expect(metrics.body).toMatch(
      /petstore_http_request_duration_seconds_bucket\{le="0.005",method="GET",route="\/pets\/:petId"\} \d+/,
    );
    expect(metrics.body).toContain('petstore_http_request_duration_seconds_count{method="GET",route="/pets/:petId"} 2');
  });
});

describe('admin API', () => {
  const admin = (method: AdminMethod, url: string, payload?: object, token?: string | null) =>
    adminRequest(t.admin, method, url, payload, token);

  it('creates, lists, shows, re-plans and revokes keys; the full key appears only at creation', async () => {
    t = await testApp({ env: { ADMIN_TOKEN: TOKEN } });
    const created = await admin('POST', '/admin/keys', { plan: 'free', name: 'from admin' });
    expect(created.statusCode).toBe(201);
    const { id, key } = json(created);
    expect(key).toMatch(/^pet_/);
    const publicGet = () => t.app.inject({ url: '/pets', headers: { 'x-api-key': key } });
    expect((await publicGet()).headers['x-ratelimit-limit']).toBe('60');

    const listed = json(await admin('GET', '/admin/keys')).data;
    expect(listed.map((k: { id: string }) => k.id)).toContain(id);
    expect(JSON.stringify(listed)).not.toContain(key);

    const shown = await admin('GET', `/admin/keys/${id}`);
    expect(json(shown)).toMatchObject({ id, plan: 'free', name: 'from admin', ban: null, revokedAt: null });
    expect(shown.body).not.toContain(key);

    const replanned = await admin('PATCH', `/admin/keys/${id}`, { plan: 'business' });
    expect(json(replanned)).toMatchObject({ plan: 'business' });
    expect((await publicGet()).headers['x-ratelimit-limit']).toBe('1000');

    const revoked = await admin('POST', `/admin/keys/${id}/revoke`);
    expect(json(revoked).revokedAt).toEqual(expect.any(String));
    expect((await publicGet()).statusCode).toBe(401);
  });

  it('answers bad input with 400 problems and unknown keys with 404', async () => {
    t = await testApp({ env: { ADMIN_TOKEN: TOKEN } });
    expect((await admin('POST', '/admin/keys', { plan: 'gold' })).statusCode).toBe(400);
    expect((await admin('POST', '/admin/keys', { plan: 'enterprise' })).statusCode).toBe(400);
    expect((await admin('POST', '/admin/keys', { plan: 'pro', perMinute: 5, perDay: 50 })).statusCode).toBe(400);
    expect((await admin('GET', '/admin/keys/key_nope')).statusCode).toBe(404);
    expect((await admin('PATCH', '/admin/keys/key_nope', { plan: 'pro' })).statusCode).toBe(404);
    expect((await admin('POST', '/admin/keys/key_nope/revoke')).statusCode).toBe(404);
    expect((await admin('POST', '/admin/keys/key_nope/unban')).statusCode).toBe(404);
  });

  it('answers a hostile key id the same on every store: a control character is a 400, anything else a 404, never a 500', async () => {
    t = await testApp({ env: { ADMIN_TOKEN: TOKEN } });
    const hostile: Array<[string, number]> = [
      ['%00', 400],
      ['key_%00', 400],
      ['%0a', 400],
      ['%7f', 400],
      ["key'%20or%201=1--", 404],
      ['%E2%80%AE', 404],
      ['%F0%9F%90%88', 404],
      ['..%2F..%2Fetc', 404],
      ['%25', 404],
    ];
    for (const [id, status] of hostile) {
      for (const [method, path] of [
        ['GET', `/admin/keys/${id}`],
        ['PATCH', `/admin/keys/${id}`],
        ['POST', `/admin/keys/${id}/revoke`],
        ['POST', `/admin/keys/${id}/unban`],
        ['DELETE', `/admin/keys/${id}/faults`],
      ] as const) {
        const response = await admin(method, path, method === 'PATCH' ? { plan: 'pro' } : undefined);
        expect(response.statusCode, `${method} ${path}`).toBe(status);
        expect(response.headers['content-type'], `${method} ${path}`).toContain('application/problem+json');
      }
    }
  });

  it('answers a URL it cannot route and a parameter too long with problems, and takes the Bearer scheme in any case', async () => {
    t = await testApp({ env: { ADMIN_TOKEN: TOKEN } });
    const badUrl = await admin('GET', '/admin/keys/%zz');
    expect(badUrl.statusCode).toBe(400);
    expect(badUrl.headers['content-type']).toContain('application/problem+json');
    expect(badUrl.headers['x-request-id']).toBeDefined();
    expect(JSON.parse(badUrl.body)).toMatchObject({
      type: 'http://petstore.test/problems/invalid-request',
      status: 400,
      errors: [],
    });
    const longId = await admin('GET', `/admin/keys/${'a'.repeat(150)}`);
    expect(longId.statusCode).toBe(400);
    expect(longId.headers['content-type']).toContain('application/problem+json');
    expect(JSON.parse(longId.body).errors).toEqual([expect.objectContaining({ in: 'path', name: 'id' })]);
    for (const scheme of ['bearer', 'BEARER', 'Bearer']) {
      const listed = await t.admin.inject({ url: '/admin/keys', headers: { authorization: `${scheme} ${TOKEN}` } });
      expect(listed.statusCode, scheme).toBe(200);
    }
  });

  it('refuses on every store what one of them could not hold: limits past 2,147,483,647, control characters in a name', async () => {
    t = await testApp({ env: { ADMIN_TOKEN: TOKEN } });
    const named = async (payload: object, method: 'POST' | 'PATCH' = 'POST', url = '/admin/keys') => {
      const response = await admin(method, url, payload);
      expect(response.statusCode, JSON.stringify(payload)).toBe(400);
      expect(response.headers['content-type']).toContain('application/problem+json');
      return (JSON.parse(response.body) as { errors: Array<{ name: string }> }).errors.map((e) => e.name);
    };
    expect(await named({ plan: 'enterprise', perMinute: 3_000_000_000, perDay: 3_000_000_000 })).toEqual([
      '/perMinute',
      '/perDay',
    ]);
    expect(await named({ plan: 'enterprise', perMinute: 10, perDay: 2_147_483_648 })).toEqual(['/perDay']);
    expect(await named({ plan: 'pro', name: 'a\u0000b' })).toEqual(['/name']);
    expect(await named({ plan: 'pro', name: 'bell\u0007' })).toEqual(['/name']);
    const created = await admin('POST', '/admin/keys', {
      plan: 'enterprise',
      perMinute: 2_147_483_647,
      perDay: 2_147_483_647,
      name: 'Zoë’s key',
    });
    expect(created.statusCode).toBe(201);
    const { id } = JSON.parse(created.body) as { id: string };
    expect(
      await named({ plan: 'enterprise', perMinute: 1, perDay: 3_000_000_000 }, 'PATCH', `/admin/keys/${id}`),
    ).toEqual(['/perDay']);
    expect(JSON.parse((await admin('GET', `/admin/keys/${id}`)).body)).toMatchObject({
      name: 'Zoë’s key',
      perMinute: 2_147_483_647,
    });
  });
});
