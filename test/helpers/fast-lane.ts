import { ServerResponse } from 'node:http';
import { vi } from 'vitest';
import { MemoryLimiterStore } from '../../src/ratelimit/memory-store.js';
import type { Policy } from '../../src/ratelimit/plans.js';
import type { LimiterStore } from '../../src/ratelimit/store.js';
import type { Verdict } from '../../src/ratelimit/verdict.js';
import { type TestApp, testApp } from './app.js';
import { fakeClock } from './clock.js';

/**
 * For the fast lane's suites (test/http/fast-lane*.test.ts): an app on either side of the comparison,
 * listening on a socket (where the lane answers what it can) or injected into (where it never does),
 * and what a client sees of each answer. The suites close `apps` after each test.
 */
export const apps: TestApp[] = [];

/**
 * What tells the entrances apart is how an answer is written: Fastify hands `writeHead` an object of
 * headers, the lane the list it collected (src/http/fast-lane.ts). Both ask the limiter's `hitNow` first.
 */
function writeHeadSpy() {
  // Spied on anew should an earlier suite in this worker have restored the spy (vitest's isolate: false).
  const current = ServerResponse.prototype.writeHead;
  return vi.isMockFunction(current) ? current : vi.spyOn(ServerResponse.prototype, 'writeHead');
}

/** What a client sees of an answer, less what differs between any two answers (date, connection). */
export interface Seen {
  status: number;
  headers: Record<string, string>;
  body: string;
}
const PER_CONNECTION = new Set(['date', 'connection', 'keep-alive', 'transfer-encoding']);

function seen(status: number, headers: Record<string, string | string[] | number | undefined>, body: string): Seen {
  const kept = Object.entries(headers)
    .filter(([name]) => !PER_CONNECTION.has(name.toLowerCase()))
    .map(([name, value]) => [name.toLowerCase(), String(value)] as const)
    .sort(([a], [b]) => a.localeCompare(b));
  return { status, headers: Object.fromEntries(kept), body };
}

export interface Step {
  path: string;
  key: 'free' | 'revoked' | 'none';
  /** Milliseconds the clock moves before the request. */
  wait: number;
  /** GET unless said; a body is sent as JSON. */
  method?: 'GET' | 'POST' | 'DELETE';
  body?: object;
  /** Sent as `X-Forwarded-For`, as a proxy in front of the service would. */
  forwardedFor?: string;
}

/**
 * A limiter that, like Redis, never decides at once: the lane then waits for its `hit`. It decides as
 * the memory store does; `failNext` makes its next `hit` fail.
 */
export class AwaitedLimiter implements LimiterStore {
  failNext = false;
  readonly #memory: MemoryLimiterStore;
  constructor(clock: () => number) {
    this.#memory = new MemoryLimiterStore({ clock });
  }
  hitNow(): undefined {
    return undefined;
  }
  async hit(caller: string, policy: Policy, unbanSeq?: number): Promise<Verdict> {
    await Promise.resolve();
    if (this.failNext) {
      this.failNext = false;
      throw new Error('the store failed');
    }
    return this.#memory.hitNow(caller, policy, unbanSeq);
  }
  refuse(caller: string, policy: Policy, unbanSeq?: number): Promise<Verdict> {
    return this.#memory.refuse(caller, policy, unbanSeq);
  }
  peek(caller: string, policy: Policy, unbanSeq?: number): Promise<Verdict> {
    return this.#memory.peek(caller, policy, unbanSeq);
  }
  unban(caller: string): Promise<void> {
    return this.#memory.unban(caller);
  }
  banOf(caller: string, unbanSeq?: number): Promise<{ until: number; level: number } | null> {
    return this.#memory.banOf(caller, unbanSeq);
  }
  readonly stamps = false;
  forget(caller: string): Promise<void> {
    return this.#memory.forget(caller);
  }
  restamp(): Promise<void> {
    return this.#memory.restamp([]);
  }
  close(): Promise<void> {
    return this.#memory.close();
  }
}

export type Limiting = 'at once' | 'awaited';

/** One app, its keys, and a way to send a step. */
export async function side(over: 'socket' | 'inject', limiting: Limiting = 'at once', sqliteFile?: string, env?: Record<string, string>) {
  const logLines: string[] = [];
  const clock = fakeClock();
  const limiter: LimiterStore = limiting === 'awaited' ? new AwaitedLimiter(clock) : new MemoryLimiterStore({ clock });
  const t = await testApp({ logLines, clock, limiter, sqliteFile, env });
  apps.push(t);
  // On PostgreSQL, rows are trusted from memory once changes made elsewhere are heard.
  await t.changes.ready();
  const { key: free, record: freeRecord } = await t.keys.create({ plan: 'free' });
  // The same id on both sides: a collection's cursors are signed for the key that reads it.
  await t.db.updateTable('api_keys').set({ id: 'key_00000000000f7ee0' }).where('id', '=', freeRecord.id).execute();
  const { key: revoked, record } = await t.keys.create({ plan: 'pro' });
  await t.keys.revoke(record.id);
  const keys = { free, revoked, none: undefined };
  const base = over === 'socket' ? await t.app.listen({ host: '127.0.0.1', port: 0 }) : '';
  let requestNumber = 0;
  const send = async ({ path, key, wait, method = 'GET', body: sent, forwardedFor }: Step): Promise<Seen & { laneAnswered: boolean }> => {
    t.clock.advance(wait);
    const headers: Record<string, string> = { 'x-request-id': `req-${++requestNumber}` };
    if (forwardedFor) headers['x-forwarded-for'] = forwardedFor;
    if (keys[key]) headers['x-api-key'] = keys[key];
    const body = sent === undefined ? undefined : JSON.stringify(sent);
    if (body !== undefined) headers['content-type'] = 'application/json';
    // Requests are sent one at a time: the calls seen from here on are this one's.
    const writeHead = writeHeadSpy();
    writeHead.mockClear();
    let answer: Seen;
    if (over === 'socket') {
      const response = await fetch(`${base}${path}`, { method, headers, body });
      answer = seen(response.status, Object.fromEntries(response.headers), await response.text());
    } else {
      const response = await t.app.inject({ method, url: path, headers, body });
      answer = seen(response.statusCode, response.headers, response.body);
    }
    const laneAnswered = writeHead.mock.calls.some((call) => Array.isArray(call[1]));
    return { ...answer, laneAnswered };
  };
  // The lines of requests (the access lines, a ban's start), not of the listener.
  const accessLines = () =>
    logLines
      .map((line) => JSON.parse(line) as { msg: string; reqId?: string; req: unknown; statusCode: number; level: number })
      .filter((line) => line.reqId !== undefined)
      .map(({ msg, reqId, req, statusCode, level }) => ({ msg, reqId, req, statusCode, level }));
  const requestMetrics = async () =>
    (await t.metrics.registry.metrics())
      .split('\n')
      .filter((line) => line.startsWith('petstore_http_requests_total') || line.startsWith('petstore_rate_limit'));
  return { t, limiter, send, accessLines, requestMetrics, freeKeyId: (await t.keys.findByKey(free))!.id };
}
