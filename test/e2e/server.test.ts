import { existsSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BUILT, runBuilt, startServer, tempDir } from '../helpers/process.js';

const KEY_LINE = /^ {2}(free|pro|business) +(pet_[A-Za-z0-9_-]{32})$/gm;

describe('the service as started by npm start', () => {
  it('creates, migrates and seeds ./data/petstore.db on first start and prints one demo key per plan, once', async () => {
    const dir = tempDir();
    const first = await startServer({ DATABASE_URL: '' }, dir);
    try {
      expect(existsSync(join(dir, 'data/petstore.db'))).toBe(true);
      const keys = [...first.output().matchAll(KEY_LINE)].map(
        (m) => [m[1] as 'free' | 'pro' | 'business', m[2]!] as const,
      );
      expect(keys.map(([plan]) => plan)).toEqual(['free', 'pro', 'business']);
      expect(first.output()).toMatch(new RegExp(`curl -i -H 'X-API-Key: ${keys[0]![1]}' http://localhost:\\d+/pets`));
      for (const [plan, key] of keys) {
        const response = await fetch(`${first.url}/pets`, { headers: { 'x-api-key': key } });
        expect(response.status).toBe(200);
        expect(response.headers.get('x-ratelimit-limit')).toBe({ free: '60', pro: '300', business: '1000' }[plan]);
        expect(((await response.json()) as { data: unknown[] }).data.length).toBeGreaterThanOrEqual(10);
      }
      // And a test key, with its line that asks for a fault.
      const testKey = /^ {2}test +(pet_test_[A-Za-z0-9_-]{32})$/m.exec(first.output())![1]!;
      expect(first.output()).toContain(`curl -i -H 'X-API-Key: ${testKey}' -H 'Prefer: fault=503' http://localhost:`);
      const failed = await fetch(`${first.url}/pets`, { headers: { 'x-api-key': testKey, prefer: 'fault=503' } });
      expect([failed.status, failed.headers.get('preference-applied')]).toEqual([503, 'fault=503']);
    } finally {
      expect(await first.stop()).toBe(0);
    }
    const second = await startServer({ DATABASE_URL: '' }, dir);
    expect(second.output()).not.toMatch(KEY_LINE);
    expect(await second.stop()).toBe(0);
  });

  it('prints no demo keys in production or with DEMO_KEYS=false', async () => {
    for (const env of [{ NODE_ENV: 'production' }, { DEMO_KEYS: 'false' }] as Record<string, string>[]) {
      const server = await startServer({ DATABASE_URL: join(tempDir(), 'p.db'), ...env });
      expect(server.output()).not.toMatch(/pet_/);
      expect(await server.stop()).toBe(0);
    }
  });

  it('on SIGTERM finishes the request in flight, then exits 0', async () => {
    const server = await startServer({ DATABASE_URL: join(tempDir(), 'p.db') });
    const key = [...server.output().matchAll(KEY_LINE)][0]![2]!;
    const body = JSON.stringify({ petId: 1, quantity: 1 });
    const { port } = new URL(server.url);
    // Headers now, body later: the request is in flight when the signal arrives.
    const inFlight = new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request(
        {
          port,
          method: 'POST',
          path: '/store/orders',
          headers: { 'x-api-key': key, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
        },
        (res) => {
          let text = '';
          res.on('data', (d) => (text += d));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
        },
      );
      req.on('error', reject);
      req.write(body.slice(0, 5));
      setTimeout(() => {
        server.child.kill('SIGTERM');
        setTimeout(() => req.end(body.slice(5)), 300);
      }, 300);
    });
    const response = await inFlight;
    expect(response.status).toBe(201);
    expect(JSON.parse(response.body)).toMatchObject({ petId: 1, status: 'placed' });
    expect(await server.stop()).toBe(0);
    expect(server.output()).not.toMatch(/pet_[A-Za-z0-9_-]{32}.*\{|"level":\d+.*pet_[A-Za-z0-9_-]{8}/);
  });
});

describe('a bad configuration (src/config.ts)', () => {
  it.each([
    [{ PORT: 'abc' }, /^petstore: bad configuration: PORT: expected a positive whole number, got "abc"\n$/],
    [{ DATABASE_URL: 'mysql://x' }, /^petstore: bad configuration: DATABASE_URL: .*not supported\n$/],
    [
      { REDIS_CLUSTER_NODES: '127.0.0.1:7000,nope' },
      /^petstore: bad configuration: REDIS_CLUSTER_NODES: expected host:port,host:port,… \(seed nodes of the cluster\); "nope" is not one\n$/,
    ],
    [
      { PETS_GET_DEPRECATED_AT: '2027-01-01T00:00:00Z', PETS_GET_SUNSET_AT: '2026-01-01T00:00:00Z' },
      /^petstore: bad configuration: PETS_GET_SUNSET_AT: the sunset may not precede PETS_GET_DEPRECATED_AT\n$/,
    ],
  ])('stops the service at start-up with one line and a non-zero exit: %j', async (env, line) => {
    const run = await runBuilt(BUILT.service, [], env);
    expect(run.code).not.toBe(0);
    expect(run.stderr).toMatch(line);
    expect(run.stdout).toBe('');
  });
});
