import { randomBytes } from 'node:crypto';
import { Agent, request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.js';
import { KeysRepository } from '../../src/keys/repository.js';
import { postgresAvailable, type TestDatabase, testDatabase } from '../helpers/database.js';
import { type Nginx, nginxInstalled, startNginx } from '../helpers/nginx.js';
import { cli, type Server, startServer } from '../helpers/process.js';
import { redisForTests } from '../helpers/redis.js';

// Two real server processes sharing one PostgreSQL schema and one Redis: they must behave as one.
const redis = await redisForTests();
const available = (await postgresAvailable()) && redis !== null;
const TOKEN = 'admin-token-for-tests-0123456789';

describe.skipIf(!available)('several instances sharing PostgreSQL and Redis', () => {
  let store: TestDatabase;
  let keys: KeysRepository;
  let a: Server;
  let b: Server;
  let env: Record<string, string>;

  beforeAll(async () => {
    store = await testDatabase({ kind: 'postgres' });
    keys = new KeysRepository(store.db, systemClock);
    env = {
      DATABASE_URL: store.url,
      REDIS_URL: redis!.url,
      // A prefix of this run's own: the anonymous callers (127.0.0.1) of other runs stay apart.
      REDIS_KEY_PREFIX: `petstore-test-${randomBytes(4).toString('hex')}:`,
      ADMIN_TOKEN: TOKEN,
      TRUST_PROXY: '127.0.0.1',
    };
    [a, b] = await Promise.all([startServer(env), startServer(env)]);
  });
  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await store?.db.destroy();
    await store?.drop();
  });

  it('start in Redis mode and say so on /readyz', async () => {
    for (const server of [a, b]) {
      const ready = await (await fetch(`${server.adminUrl}/readyz`)).json();
      expect(ready).toMatchObject({ status: 'ready', limiter: { configured: 'redis', deciding: 'redis' } });
    }
  });

  /**
   * A new key, once both instances know it: a key made elsewhere (here, in the test's process) works
   * on a running instance within a second (docs/keys.md), so a test that uses it at once waits for
   * that, asking `GET /usage`, which counts nothing toward the key.
   */
  async function newKey(input: Parameters<KeysRepository['create']>[0]) {
    const created = await keys.create(input);
    const deadline = performance.now() + 1_000;
    for (const server of [a, b]) {
      while ((await fetch(`${server.url}/usage`, { headers: { 'x-api-key': created.key } })).status !== 200) {
        expect(performance.now(), 'a new key works on every instance within a second').toBeLessThan(deadline);
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    }
    return created;
  }

  it.each([1, 2, 3])(
    '1,000 concurrent requests at both with one free key admit exactly 60 (repetition %i)',
    async () => {
      const { key } = await newKey({ plan: 'free' });
      const agent = new Agent({ keepAlive: true, maxSockets: 250 });
      const statuses = await Promise.all(
        Array.from({ length: 1000 }, (_, i) => get(i % 2 ? a.url : b.url, '/pets?limit=1', key, agent)),
      );
      agent.destroy();
      expect(statuses.filter((s) => s === 200)).toHaveLength(60);
      expect(statuses.filter((s) => s === 429)).toHaveLength(940);
    },
  );

  it('a revocation through one instance applies on the other at its next request', async () => {
    const { record, key } = await newKey({ plan: 'pro' });
    expect(await get(b.url, '/pets', key)).toBe(200);
    const revoked = await fetch(`${a.adminUrl}/admin/keys/${record.id}/revoke`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    expect(revoked.status).toBe(200);
    expect(await get(b.url, '/pets', key)).toBe(401);
  });

  it("a change made anywhere reaches the other instance's key cache within a second, typically milliseconds", async () => {
    const { record, key } = await newKey({ plan: 'free' });
    // B holds the key in memory from here on.
    for (let i = 0; i < 3; i++) expect(await get(b.url, '/pets?limit=1', key)).toBe(200);
    const took: Record<string, number> = {};
    const until = async (what: string, seen: () => Promise<boolean>) => {
      const started = performance.now();
      while (!(await seen())) {
        expect(performance.now() - started, what).toBeLessThan(1_000);
        await new Promise((resolve) => setTimeout(resolve, 1));
      }
      took[what] = Math.round((performance.now() - started) * 10) / 10;
    };
    const limitOn = async (server: Server) =>
      (await fetch(`${server.url}/pets?limit=1`, { headers: { 'x-api-key': key } })).headers.get('x-ratelimit-limit');
    const admin = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };
    expect(
      (
        await fetch(`${a.adminUrl}/admin/keys/${record.id}`, {
          method: 'PATCH',
          headers: admin,
          body: '{"plan":"pro"}',
        })
      ).status,
    ).toBe(200);
    await until('plan change through A, seen by B (ms)', async () => (await limitOn(b)) === '300');
    await keys.setPlan(record.id, { plan: 'business' });
    await until(
      'plan change by another process, seen by A and B (ms)',
      async () => (await limitOn(a)) === '1000' && (await limitOn(b)) === '1000',
    );
    expect(
      (
        await fetch(`${a.adminUrl}/admin/keys/${record.id}/revoke`, {
          method: 'POST',
          headers: { authorization: `Bearer ${TOKEN}` },
        })
      ).status,
    ).toBe(200);
    await until('revocation through A, seen by B (ms)', async () => (await get(b.url, '/pets?limit=1', key)) === 401);
    console.info('propagation between two processes:', took);
  });

  it("a change of a key's orders answered by one instance is in the other's next page, 100 times in a row, though each holds the key's pages in memory", async () => {
    const { key } = await newKey({ plan: 'business' });
    const headers = { 'x-api-key': key, 'content-type': 'application/json' };
    const page = async (server: Server) => {
      const answer = await fetch(`${server.url}/store/orders?limit=100`, { headers });
      expect(answer.status).toBe(200);
      return ((await answer.json()) as { data: { id: number; status: string }[] }).data;
    };
    for (let i = 0; i < 100; i++) {
      const [reader, writer] = i % 2 ? [a, b] : [b, a];
      // Read twice: the second page comes from the reader's memory.
      expect(await page(reader)).toHaveLength(i);
      expect(await page(reader)).toHaveLength(i);
      const placed = await fetch(`${writer.url}/store/orders`, {
        method: 'POST',
        headers,
        body: '{"petId":1,"quantity":1}',
      });
      expect(placed.status).toBe(201);
      const { id } = (await placed.json()) as { id: number };
      expect(
        (await page(reader)).map((order) => order.id),
        `order ${i + 1}, placed through the other instance`,
      ).toContain(id);
    }
    const [first] = await page(a);
    expect(
      (await fetch(`${b.url}/store/orders/${first!.id}`, { method: 'DELETE', headers: { 'x-api-key': key } })).status,
    ).toBe(200);
    expect((await page(a)).find((order) => order.id === first!.id)?.status).toBe('cancelled');
  });

  it("a test key's clock moved or reset through one instance is its time at its next request through the other, 100 times in a row", async () => {
    const { key } = await newKey({ plan: 'business', test: true });
    const headers = { 'x-api-key': key };
    const clockOn = async (server: Server) =>
      (await (await fetch(`${server.url}/test-clock`, { headers })).json()) as {
        offsetSeconds: number;
        frozen: boolean;
      };
    const post = (server: Server, path: string, body?: object) =>
      fetch(`${server.url}${path}`, {
        method: 'POST',
        ...(body
          ? { headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(body) }
          : { headers }),
      });
    for (let i = 0; i < 100; i++) {
      const [mover, reader] = i % 2 ? [a, b] : [b, a];
      expect((await post(mover, '/test-clock/advance', { seconds: 60 })).status).toBe(200);
      const seen = await clockOn(reader);
      expect(Math.round(seen.offsetSeconds), `advance ${i + 1}, made through the other instance`).toBe(60 * (i + 1));
    }
    expect((await post(a, '/test-clock/freeze')).status).toBe(200);
    expect((await clockOn(b)).frozen).toBe(true);
    expect((await fetch(`${b.url}/test-data`, { method: 'DELETE', headers })).status).toBe(200);
    expect(await clockOn(a)).toMatchObject({ frozen: false });
    expect(Math.abs((await clockOn(a)).offsetSeconds)).toBeLessThan(1);
  });

  it("a free test key's windows follow its clock on both instances: refused through one, admitted through the other once advanced Retry-After seconds", async () => {
    const { key } = await newKey({ plan: 'free', test: true });
    const headers = { 'x-api-key': key };
    await fetch(`${a.url}/test-clock/freeze`, { method: 'POST', headers });
    for (let i = 0; i < 60; i++) expect(await get(i % 2 ? a.url : b.url, '/pets?limit=1', key)).toBe(200);
    const refused = await fetch(`${a.url}/pets?limit=1`, { headers });
    expect(refused.status).toBe(429);
    const wait = Number(refused.headers.get('retry-after'));
    expect(wait).toBe(60);
    await fetch(`${a.url}/test-clock/advance`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify({ seconds: wait }),
    });
    expect(await get(b.url, '/pets?limit=1', key)).toBe(200);
  });

  // The CLI is another process: its change reaches each instance by PostgreSQL's notification, within a second
  // (docs/keys.md, docs/scaling.md): the very next request may come before that notice.
  it('a plan change by the CLI applies on both instances within a second', async () => {
    const { record, key } = await newKey({ plan: 'free' });
    expect((await fetch(`${a.url}/pets`, { headers: { 'x-api-key': key } })).headers.get('x-ratelimit-limit')).toBe(
      '60',
    );
    const run = await cli(['keys', 'set-plan', record.id, 'business'], { DATABASE_URL: store.url });
    expect(run.code).toBe(0);
    const deadline = performance.now() + 1_000;
    for (const server of [a, b]) {
      const limit = async () =>
        (await fetch(`${server.url}/pets`, { headers: { 'x-api-key': key } })).headers.get('x-ratelimit-limit');
      while ((await limit()) !== '1000') {
        expect(performance.now(), 'the plan change reaches every instance within a second').toBeLessThan(deadline);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    }
  });

  it('a ban earned on one instance holds on the other, and an unban through one lifts it on both', async () => {
    const { record, key } = await newKey({ plan: 'free' });
    const statuses = await Promise.all(
      Array.from({ length: 70 }, (_, i) => get(i % 2 ? a.url : b.url, '/pets?limit=1', key)),
    );
    expect(statuses.filter((s) => s === 200)).toHaveLength(60);
    // The burst's 429s may all be forgiven as in flight; then a client that keeps sending, each request on a
    // connection opened after the answer before it, through either instance, is banned.
    const fresh = new Agent({ keepAlive: false });
    for (let i = 0; i < 11; i++) expect(await get(i % 2 ? a.url : b.url, '/pets?limit=1', key, fresh)).toBe(429);
    const banned = await fetch(`${b.url}/pets`, { headers: { 'x-api-key': key } });
    expect(((await banned.json()) as { type: string }).type).toMatch(/key-banned$/);
    const run = await cli(['keys', 'unban', record.id], { DATABASE_URL: store.url });
    expect(run.code).toBe(0);
    for (const server of [a, b]) {
      const response = await fetch(`${server.url}/pets`, { headers: { 'x-api-key': key } });
      expect(((await response.json()) as { type: string }).type).toMatch(/rate-limited$/);
    }
  });

  describe.skipIf(!nginxInstalled())('behind nginx with deploy/nginx.conf', () => {
    let nginx: Nginx;
    beforeAll(async () => {
      nginx = await startNginx([a.url, b.url]);
    });
    afterAll(async () => nginx?.stop());

    it('spreads requests over both instances and keeps the limit exact', async () => {
      const { key } = await newKey({ plan: 'free' });
      const agent = new Agent({ keepAlive: true, maxSockets: 100 });
      const statuses = await Promise.all(
        Array.from({ length: 300 }, () => get(nginx.url, '/pets?limit=1', key, agent)),
      );
      agent.destroy();
      expect(statuses.filter((s) => s === 200)).toHaveLength(60);
      expect(statuses.filter((s) => s === 429)).toHaveLength(240);
      const served = (await Promise.all([a, b].map(async (s) => (await fetch(`${s.adminUrl}/metrics`)).text()))).map(
        (text) =>
          Number(/petstore_http_requests_total\{method="GET",route="\/pets",status="429"\} (\d+)/.exec(text)?.[1] ?? 0),
      );
      expect(served.every((n) => n > 0)).toBe(true);
    });

    it('counts anonymous callers by the address nginx reports; a forged X-Forwarded-For changes nothing', async () => {
      // nginx reports 127.0.0.1 for this client, whose earlier 401s (straight to an instance) count too.
      const forged: number[] = [];
      for (let i = 0; i < 61; i++)
        forged.push(await get(nginx.url, '/pets', '', undefined, { 'x-forwarded-for': `198.51.100.${i}` }));
      const firstRefusal = forged.indexOf(429);
      expect(firstRefusal).toBeGreaterThan(0);
      expect(forged.slice(0, firstRefusal).every((s) => s === 401)).toBe(true);
      expect(forged.slice(firstRefusal).every((s) => s === 429)).toBe(true);
    });
  });
});

function get(
  base: string,
  path: string,
  key: string,
  agent?: Agent,
  headers: Record<string, string> = {},
): Promise<number> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const req = request({ host: hostname, port, path, headers: { 'x-api-key': key, ...headers }, agent }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end();
  });
}
