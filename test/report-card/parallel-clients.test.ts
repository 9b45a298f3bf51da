import type { Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NEWEST_VERSION } from '../../src/versions/versions.js';
import { json, type TestApp, testApp } from '../helpers/app.js';
import { closeAll, openConnections, type RawRequest, sendAll, sendOn } from '../helpers/parallel.js';

/**
 * Parallel clients, as a conformance runner's jobs are (docs/testing-clients.md#is-my-client-a-good-api-citizen):
 * each request on a connection of its own, every connection open and every request written before the
 * service answered any. A request within 50 ms of an answer, on another connection that was already open
 * when the answer was written, may have been sent before the client could read it: no check holds it
 * against the client, and its `429` counts toward no ban. A request on the same connection, or on one
 * opened after the answer, gets no allowance. The service's clock is the suite's fake clock: it moves
 * only when a test moves it.
 */

let t: TestApp;
let port: number;
const open: Socket[] = [];
beforeAll(async () => {
  t = await testApp({ overSocket: true });
  port = (t.app.server.address() as { port: number }).port;
});
afterAll(async () => {
  closeAll(open);
  await t.close();
});

async function connections(count: number): Promise<Socket[]> {
  const sockets = await openConnections(port, count, t.app.server);
  open.push(...sockets);
  return sockets;
}

interface Check {
  id: string;
  status: string;
  seen: number;
  failed: number;
  failures: { requestId: string; detail: string }[];
}

async function card(key: string): Promise<{ requests: number; checks: Check[] }> {
  return json(await t.request({ url: '/report-card', headers: { 'x-api-key': key } }));
}
const check = async (key: string, id: string) => (await card(key)).checks.find((c) => c.id === id)!;

const get = (key: string, path: string, headers: Record<string, string> = {}): RawRequest => ({
  path,
  headers: { 'x-api-key': key, 'petstore-version': NEWEST_VERSION, ...headers },
});

describe('a burst of parallel requests', () => {
  it('ten identical GETs, written before any answer: revalidates holds none against the client', async () => {
    const key = await t.newKey({ plan: 'pro', test: true });
    const answers = await sendAll(
      await connections(10),
      Array.from({ length: 10 }, () => get(key, '/pets?limit=2')),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(10).fill(200));
    expect(answers.every((a) => a.headers.etag !== undefined)).toBe(true);
    const graded = await card(key);
    expect(graded.requests).toBe(10);
    expect(graded.checks.find((c) => c.id === 'revalidates')).toMatchObject({ failed: 0 });
  });

  it('thirty GETs on a free key with ten left: ten admitted, twenty 429s, and no check failed, no ban', async () => {
    const key = await t.newKey({ plan: 'free', test: true });
    // Each URL once: no ETag is asked for twice before the burst.
    for (let i = 0; i < 50; i++) await sendOn((await connections(1))[0]!, get(key, `/pets/${i + 1}`));
    const answers = await sendAll(
      await connections(30),
      Array.from({ length: 30 }, (_, i) => get(key, `/pets?limit=${(i % 5) + 1}`)),
    );
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses.filter((s) => s === 200)).toHaveLength(10);
    expect(statuses.filter((s) => s === 429)).toHaveLength(20);
    // Every refusal is the limiter's: no ban started in the burst.
    expect(answers.filter((a) => a.status === 429).every((a) => a.body.includes('/problems/rate-limited'))).toBe(true);
    const graded = await card(key);
    for (const id of ['honours-retry-after', 'paces', 'not-banned', 'revalidates']) {
      expect(
        graded.checks.find((c) => c.id === id),
        id,
      ).toMatchObject({ failed: 0 });
    }
    const usage = json<{ ban: unknown }>(await t.request({ url: '/usage', headers: { 'x-api-key': key } }));
    expect(usage.ban).toBeNull();
  });
});

describe('where the allowance ends', () => {
  /** A test key that met a `429` on `first` (its Retry-After: 1 s); `others` were open before it was written. */
  async function refused(others: number) {
    const key = await t.newKey({ plan: 'pro', test: true });
    const [first, ...rest] = await connections(1 + others);
    const answer = await sendOn(first!, get(key, '/pets/1', { prefer: 'fault=429' }));
    expect(answer.status).toBe(429);
    return { key, first: first!, rest };
  }

  it('another connection open before the 429, within 50 ms: forgiven', async () => {
    const { key, rest } = await refused(1);
    t.clock.advance(50);
    expect((await sendOn(rest[0]!, get(key, '/pets/2'))).status).toBe(200);
    expect(await check(key, 'honours-retry-after')).toMatchObject({ status: 'passed', failed: 0 });
  });

  it('the same connection, a connection opened after the 429, or one open before it but 51 ms late: held against the client', async () => {
    const same = await refused(0);
    await sendOn(same.first, get(same.key, '/pets/2', { 'x-request-id': 'same-connection' }));
    expect((await check(same.key, 'honours-retry-after')).failures[0]).toMatchObject({
      requestId: 'same-connection',
      detail: 'sent 0 s after a 429; Retry-After said 1',
    });

    const opened = await refused(0);
    const [after] = await connections(1);
    await sendOn(after!, get(opened.key, '/pets/2', { 'x-request-id': 'opened-after' }));
    expect((await check(opened.key, 'honours-retry-after')).failures[0]).toMatchObject({ requestId: 'opened-after' });

    const late = await refused(1);
    t.clock.advance(51);
    await sendOn(late.rest[0]!, get(late.key, '/pets/2', { 'x-request-id': 'late' }));
    expect((await check(late.key, 'honours-retry-after')).failures[0]).toMatchObject({
      requestId: 'late',
      detail: 'sent 0.05 s after a 429; Retry-After said 1',
    });
  });

  it('the allowance runs from the answer that opened the situation: requests that keep coming on open connections are held against the client', async () => {
    const { key, rest } = await refused(6);
    // Each within 50 ms of the one before, but the later ones past 50 ms of the first 429.
    for (const [i, socket] of rest.entries()) {
      t.clock.advance(20);
      await sendOn(socket, get(key, '/pets/2', { prefer: 'fault=429', 'x-request-id': `r${i}` }));
    }
    const graded = await check(key, 'honours-retry-after');
    expect(graded.status).toBe('failed');
    expect(graded.failures.map((f) => f.requestId)).toContain('r5');
    expect(graded.failures.map((f) => f.requestId)).not.toContain('r0');
  });
});
