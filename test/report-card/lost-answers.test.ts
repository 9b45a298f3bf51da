import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NEWEST_VERSION } from '../../src/versions/versions.js';
import { json, type TestApp, testApp } from '../helpers/app.js';

/**
 * What needs real connections (docs/testing-clients.md#is-my-client-a-good-api-citizen): a POST whose connection was
 * reset, or cut by the client, before its answer. (The in-flight allowance: ./parallel-clients.test.ts.)
 */

let t: TestApp;
let port: number;
beforeAll(async () => {
  t = await testApp({ overSocket: true });
  port = (t.app.server.address() as { port: number }).port;
});
afterAll(async () => {
  await t.close();
});

interface Check {
  id: string;
  status: string;
  seen: number;
  failed: number;
  failures: { requestId: string; detail: string }[];
}

/** Sends on a connection of its own; resolves with the status, or the error that ended it. */
function send(
  key: string,
  path: string,
  {
    method = 'GET',
    headers = {},
    body,
    cutAfterMs,
  }: { method?: string; headers?: Record<string, string>; body?: object; cutAfterMs?: number } = {},
) {
  return new Promise<{ status?: number; error?: string; retryAfter?: string }>((resolve) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method,
        path,
        agent: false,
        headers: {
          'x-api-key': key,
          'petstore-version': NEWEST_VERSION,
          ...(body ? { 'content-type': 'application/json' } : {}),
          ...headers,
        },
      },
      (res) => {
        res.resume();
        res.on('end', () =>
          resolve({ status: res.statusCode, retryAfter: res.headers['retry-after'] as string | undefined }),
        );
      },
    );
    req.on('error', (error: NodeJS.ErrnoException) => resolve({ error: error.code ?? error.message }));
    req.end(body ? JSON.stringify(body) : undefined);
    if (cutAfterMs !== undefined) setTimeout(() => req.destroy(), cutAfterMs);
  });
}

async function check(key: string, id: string): Promise<Check> {
  const card = json<{ checks: Check[] }>(await t.request({ url: '/report-card', headers: { 'x-api-key': key } }));
  return card.checks.find((c) => c.id === id)!;
}

describe('a POST without its answer', () => {
  const order = { petId: 1, quantity: 1 };
  it('a connection reset: the repeat must carry the first try’s Idempotency-Key', async () => {
    const good = await t.newKey({ plan: 'pro', test: true });
    expect(
      (
        await send(good, '/store/orders', {
          method: 'POST',
          body: order,
          headers: { prefer: 'fault=reset', 'idempotency-key': 'k1' },
        })
      ).error,
    ).toBe('ECONNRESET');
    expect(
      (await send(good, '/store/orders', { method: 'POST', body: order, headers: { 'idempotency-key': 'k1' } })).status,
    ).toBe(201);
    expect(await check(good, 'idempotent-retries')).toMatchObject({ status: 'passed', seen: 1 });

    const bad = await t.newKey({ plan: 'pro', test: true });
    await send(bad, '/store/orders', { method: 'POST', body: order, headers: { prefer: 'fault=reset' } });
    await send(bad, '/store/orders', { method: 'POST', body: order, headers: { 'x-request-id': 'bare' } });
    expect((await check(bad, 'idempotent-retries')).failures[0]).toMatchObject({
      requestId: 'bare',
      detail: 'repeated POST /store/orders without an Idempotency-Key 0 s after a reset connection',
    });
  });

  it('a reset answer taught the client nothing: no ETag to revalidate with', async () => {
    const c = await t.newKey({ plan: 'pro', test: true });
    for (let i = 0; i < 3; i++)
      expect((await send(c, '/pets/1', { headers: { prefer: 'fault=reset' } })).error).toBe('ECONNRESET');
    expect((await send(c, '/pets/1')).status).toBe(200);
    expect(await check(c, 'revalidates')).toMatchObject({ status: 'untested', seen: 0 });
  });

  it('a connection the client cut while its request waited, before its body was read: graded, but its repeat is taken for none (the service cannot tell the body)', async () => {
    const c = await t.newKey({ plan: 'pro', test: true });
    expect(
      (
        await send(c, '/store/orders', {
          method: 'POST',
          body: order,
          headers: { prefer: 'latency=500' },
          cutAfterMs: 50,
        })
      ).error,
    ).toBeDefined();
    // The service learns of the cut when the socket closes, and grades the request then.
    while (
      json<{ requests: number }>(await t.request({ url: '/report-card', headers: { 'x-api-key': c } })).requests === 0
    )
      await new Promise((resolve) => setImmediate(resolve));
    expect((await send(c, '/store/orders', { method: 'POST', body: { petId: 2, quantity: 1 } })).status).toBe(201);
    expect(await check(c, 'idempotent-retries')).toMatchObject({ status: 'untested', seen: 0 });
  });
});
