import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, type TestApp, testApp } from '../helpers/app.js';
import { postgresAvailable, TEST_DATABASE_URL } from '../helpers/database.js';
import { type TcpProxy, tcpProxy } from '../helpers/proxy.js';

const available = await postgresAvailable();

describe.skipIf(!available)('PostgreSQL unreachable', () => {
  let proxy: TcpProxy;
  let t: TestApp;
  let key: string;
  beforeAll(async () => {
    const { hostname, port } = new URL(TEST_DATABASE_URL);
    proxy = await tcpProxy({ host: hostname, port: Number(port || 5432) });
    const via = new URL(TEST_DATABASE_URL);
    via.hostname = '127.0.0.1';
    via.port = String(proxy.port);
    t = await testApp({ postgresVia: via.toString() });
    key = await t.newKey('pro');
  });
  afterAll(async () => {
    await t.close();
    await proxy.close();
  });

  const getPets = () => t.app.inject({ url: '/pets', headers: { 'x-api-key': key } });

  it('answers 503 with Retry-After and the rate-limit headers, fails /readyz, and recovers without a restart', async () => {
    expect((await getPets()).statusCode).toBe(200);
    expect((await t.admin.inject({ url: '/readyz' })).statusCode).toBe(200);

    await proxy.cut();
    const down = await getPets();
    expect(down.statusCode).toBe(503);
    expect(down.headers['retry-after']).toMatch(/^[1-9]\d*$/);
    expect(down.headers['x-ratelimit-limit']).toBeDefined();
    expect(json(down)).toMatchObject({ type: 'http://petstore.test/problems/service-unavailable', status: 503 });
    expect(down.body).not.toMatch(/ECONNREFUSED|127\.0\.0\.1|postgres/i);
    const ordering = await t.app.inject({
      method: 'POST',
      url: '/store/orders',
      headers: { 'x-api-key': key },
      payload: { petId: 1 },
    });
    expect(ordering.statusCode).toBe(503);
    const ready = await t.admin.inject({ url: '/readyz' });
    expect(ready.statusCode).toBe(503);
    expect(json(ready)).toMatchObject({ checks: { database: false } });
    // What needs no store keeps working.
    expect((await t.app.inject({ url: '/openapi.json' })).statusCode).toBe(200);
    // /usage needs only the key: held in memory, it is trusted for a second
    // without word from the store, then read again (its document says so).
    t.clock.advance(1_100);
    const usage = await t.app.inject({ url: '/usage', headers: { 'x-api-key': key } });
    expect(usage.statusCode).toBe(503);
    expect(usage.headers['retry-after']).toMatch(/^[1-9]\d*$/);

    await proxy.restore();
    expect((await getPets()).statusCode).toBe(200);
    expect((await t.admin.inject({ url: '/readyz' })).statusCode).toBe(200);
  });
});
