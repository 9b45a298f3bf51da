import { mkdtempSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { MemoryLimiterStore } from '../../src/ratelimit/memory-store.js';
import type { Policy } from '../../src/ratelimit/plans.js';
import type { LimiterStore } from '../../src/ratelimit/store.js';
import type { Verdict } from '../../src/ratelimit/verdict.js';
import { type TestApp, testApp } from '../helpers/app.js';
import { fakeClock } from '../helpers/clock.js';
import { TEST_STORE } from '../helpers/database.js';

/**
 * The fast lane (src/http/fast-lane.ts) answers `GET /pets/{petId}` in front of Fastify when the key
 * and the pet are in memory, and `GET /store/orders` when the key was answered that page before. A client must not be able to tell: the same sequence of requests, sent
 * over a socket to one app (where the lane answers what it can) and injected into Fastify in another
 * (where it never does), gets the same statuses, headers and bodies, the same access-log lines and
 * the same metrics.
 */

const apps: TestApp[] = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((t) => t.close()));
});

/** What a client sees of an answer, less what differs between any two answers (date, connection). */
interface Seen {
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

interface Step {
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
class AwaitedLimiter implements LimiterStore {
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
  close(): Promise<void> {
    return this.#memory.close();
  }
}

type Limiting = 'at once' | 'awaited';

/** One app, its keys, and a way to send a step. */
async function side(over: 'socket' | 'inject', limiting: Limiting = 'at once', sqliteFile?: string, env?: Record<string, string>) {
  const logLines: string[] = [];
  const clock = fakeClock();
  const limiter: LimiterStore = limiting === 'awaited' ? new AwaitedLimiter(clock) : new MemoryLimiterStore({ clock });
  const t = await testApp({ logLines, clock, limiter, sqliteFile, env });
  apps.push(t);
  // On PostgreSQL, rows are trusted from memory once changes made elsewhere are heard.
  await t.changes.ready();
  const free = await t.newKey('free');
  const { key: revoked, record } = await t.keys.create({ plan: 'pro' });
  await t.keys.revoke(record.id);
  const keys = { free, revoked, none: undefined };
  // Fastify's limit step calls the limiter's `hit` (the memory store's `hit` calls its own `hitNow`);
  // the lane calls `hitNow`, and only when that cannot decide, `hit`.
  const [hit, hitNow] = [vi.spyOn(limiter, 'hit'), vi.spyOn(limiter, 'hitNow')];
  const base = over === 'socket' ? await t.app.listen({ host: '127.0.0.1', port: 0 }) : '';
  let requestNumber = 0;
  const send = async ({ path, key, wait, method = 'GET', body: sent, forwardedFor }: Step): Promise<Seen & { laneAnswered: boolean }> => {
    t.clock.advance(wait);
    const headers: Record<string, string> = { 'x-request-id': `req-${++requestNumber}` };
    if (forwardedFor) headers['x-forwarded-for'] = forwardedFor;
    if (keys[key]) headers['x-api-key'] = keys[key];
    const body = sent === undefined ? undefined : JSON.stringify(sent);
    if (body !== undefined) headers['content-type'] = 'application/json';
    const [hitsBefore, hitNowsBefore] = [hit.mock.calls.length, hitNow.mock.calls.length];
    let answer: Seen;
    if (over === 'socket') {
      const response = await fetch(`${base}${path}`, { method, headers, body });
      answer = seen(response.status, Object.fromEntries(response.headers), await response.text());
    } else {
      const response = await t.app.inject({ method, url: path, headers, body });
      answer = seen(response.statusCode, response.headers, response.body);
    }
    const laneAnswered = limiting === 'at once' ? hit.mock.calls.length === hitsBefore : hitNow.mock.calls.length > hitNowsBefore;
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

describe('the fast lane', () => {
  it.each<Limiting>(['at once', 'awaited'])(
    'answers GET /pets/{petId} exactly as Fastify does: admitted, over the limit, banned, and what it leaves to Fastify (limiter deciding %s)',
    async (limiting) => {
      const socket = await side('socket', limiting);
      const inject = await side('inject', limiting);
      const steps: Step[] = [
        // The first request of a key reads it from the store (Fastify); later ones find it in memory.
        ...Array.from({ length: 60 }, (_, i): Step => ({ path: '/pets/1', key: 'free', wait: i === 0 ? 0 : 250 })),
        // Over the minute's 60: refused, until the tenth refusal starts a ban; then banned.
        ...Array.from({ length: 12 }, (): Step => ({ path: '/pets/1', key: 'free', wait: 100 })),
        // A pet not in memory yet: Fastify refuses it (a refusal never reads the pet).
        { path: '/pets/2', key: 'free', wait: 10 },
        // What the lane leaves to Fastify: a query string, a pet that does not exist, a revoked key, no key.
        { path: '/pets/1?x=1', key: 'free', wait: 10 },
        { path: '/pets/999999', key: 'free', wait: 10 },
        { path: '/pets/1', key: 'revoked', wait: 10 },
        { path: '/pets/1', key: 'none', wait: 10 },
        // Past the ban: admitted again.
        { path: '/pets/1', key: 'free', wait: 3_600_000 },
      ];
      let laneAnswers = 0;
      for (const step of steps) {
        const { laneAnswered, ...viaSocket } = await socket.send(step);
        const { laneAnswered: injectReachedLane, ...viaInject } = await inject.send(step);
        expect(injectReachedLane, 'inject never reaches the lane').toBe(false);
        if (laneAnswered) laneAnswers++;
        expect(viaSocket, `${step.path} with ${step.key}`).toEqual(viaInject);
      }
      // The lane did answer: the free key's requests for pet 1 but the first. (On PostgreSQL fewer: a row
      // read more than a second ago on the test's clock, which jumps, is read again unless the channel's
      // last heartbeat, on the same clock, is younger; see db/change-feed.ts.)
      if (TEST_STORE === 'sqlite') expect(laneAnswers).toBe(59 + 12 + 1);
      else expect(laneAnswers).toBeGreaterThan(0);
      expect(socket.accessLines()).toEqual(inject.accessLines());
      expect(await socket.requestMetrics()).toEqual(await inject.requestMetrics());
    },
  );

  it("answers behind a trusted proxy too, logging the client's address as Fastify does", async () => {
    const env = { TRUST_PROXY: '127.0.0.1' };
    const socket = await side('socket', 'at once', undefined, env);
    const inject = await side('inject', 'at once', undefined, env);
    const steps: Step[] = [
      { path: '/pets/1', key: 'free', wait: 0, forwardedFor: '203.0.113.7' },
      { path: '/pets/1', key: 'free', wait: 10, forwardedFor: '203.0.113.7' },
      // A chain through a second, untrusted hop: the address that hop gives is not believed.
      { path: '/pets/1', key: 'free', wait: 10, forwardedFor: '198.51.100.9, 203.0.113.8' },
      { path: '/pets/1', key: 'free', wait: 10 },
    ];
    const laneAnswered = [];
    for (const step of steps) {
      const { laneAnswered: answered, ...viaSocket } = await socket.send(step);
      const { laneAnswered: _, ...viaInject } = await inject.send(step);
      laneAnswered.push(answered);
      expect(viaSocket).toEqual(viaInject);
    }
    expect(laneAnswered).toEqual([false, true, true, true]);
    expect(socket.accessLines()).toEqual(inject.accessLines());
    const addresses = socket.accessLines().map(({ req }) => (req as { remoteAddress: string }).remoteAddress);
    expect(addresses).toEqual(['203.0.113.7', '203.0.113.7', '203.0.113.8', '127.0.0.1']);
  });

  it('hands a request whose limiter call fails to Fastify, which counts it once', async () => {
    const socket = await side('socket', 'awaited');
    const step: Step = { path: '/pets/1', key: 'free', wait: 0 };
    expect((await socket.send(step)).laneAnswered).toBe(false);
    (socket.limiter as AwaitedLimiter).failNext = true;
    const answer = await socket.send(step);
    expect(answer.status).toBe(200);
    expect(answer.headers['x-ratelimit-remaining']).toBe('58');
    expect((await socket.send(step)).laneAnswered).toBe(true);
  });

  it('leaves a deprecated operation past its sunset to Fastify, which answers 410', async () => {
    const socket = await side('socket');
    const step: Step = { path: '/pets/1', key: 'free', wait: 0 };
    expect((await socket.send(step)).status).toBe(200);
    expect((await socket.send(step)).laneAnswered).toBe(true);
    socket.t.clock.set('2027-07-01T00:00:00.000Z');
    const gone = await socket.send(step);
    expect(gone.status).toBe(410);
    expect(gone.laneAnswered).toBe(false);
  });

  it("answers GET /store/orders exactly as Fastify does, and never a page older than its key's last change", async () => {
    const socket = await side('socket');
    const inject = await side('inject');
    const list = (path = '/store/orders'): Step => ({ path, key: 'free', wait: 100 });
    const steps: Step[] = [
      // The first read of a page is Fastify's; the same URL again, the lane's (on SQLite).
      list(),
      list(),
      { path: '/store/orders', key: 'free', wait: 100, method: 'POST', body: { petId: 1 } },
      list(),
      list(),
      { path: '/store/orders', key: 'free', wait: 100, method: 'POST', body: { petId: 2, quantity: 3 } },
      list('/store/orders?limit=1'),
      list('/store/orders?limit=1'),
      list(),
      { path: '/store/orders/1', key: 'free', wait: 100, method: 'DELETE' },
      list('/store/orders?limit=1'),
      list('/store/orders?status=cancelled'),
      list('/store/orders?status=cancelled'),
      // What the lane leaves to Fastify: a URL Fastify refuses, a revoked key, no key.
      list('/store/orders?limit=0'),
      list('/store/orders?limit=0'),
      { path: '/store/orders', key: 'revoked', wait: 10 },
      { path: '/store/orders', key: 'none', wait: 10 },
    ];
    const answers: Seen[] = [];
    const laneAnswered: string[] = [];
    for (const [i, step] of steps.entries()) {
      const { laneAnswered: lane, ...viaSocket } = await socket.send(step);
      const { laneAnswered: _, ...viaInject } = await inject.send(step);
      if (lane) laneAnswered.push(`${i}: ${step.method ?? 'GET'} ${step.path}`);
      expect(viaSocket, `${i}: ${step.method ?? 'GET'} ${step.path} with ${step.key}`).toEqual(viaInject);
      answers.push(viaSocket);
    }
    // Every page shows what was placed and cancelled before it.
    const orders = (i: number) => (JSON.parse(answers[i]!.body) as { data: { id: number; status: string }[] }).data.map((o) => `${o.id} ${o.status}`);
    expect(orders(1)).toEqual([]);
    expect(orders(4)).toEqual(['1 placed']);
    expect(orders(7)).toEqual(['1 placed']);
    expect(orders(8)).toEqual(['1 placed', '2 placed']);
    expect(orders(10)).toEqual(['1 cancelled']);
    expect(orders(12)).toEqual(['1 cancelled']);
    // The lane answered the repeated reads with nothing changed in between, and only where every change is heard at once.
    expect(laneAnswered).toEqual(
      TEST_STORE === 'sqlite' ? ['1: GET /store/orders', '4: GET /store/orders', '7: GET /store/orders?limit=1', '12: GET /store/orders?status=cancelled'] : [],
    );
    expect(socket.accessLines()).toEqual(inject.accessLines());
    expect(await socket.requestMetrics()).toEqual(await inject.requestMetrics());
  });

  it('sees an order another process wrote to the store at its next request', async () => {
    // On SQLite, a file another process can open (the CLI, an operator's sqlite3); on PostgreSQL, the suite's schema.
    const file = TEST_STORE === 'sqlite' ? join(mkdtempSync(join(tmpdir(), 'petstore-lane-')), 'petstore.db') : undefined;
    const socket = await side('socket', 'at once', file);
    const list: Step = { path: '/store/orders', key: 'free', wait: 100 };
    // The lane keeps pages only on SQLite (orders/order-pages.ts).
    const kept = TEST_STORE === 'sqlite';
    expect(JSON.parse((await socket.send(list)).body).data).toEqual([]);
    expect((await socket.send(list)).laneAnswered).toBe(kept);
    const row = [socket.freeKeyId, '2026-12-01T00:00:00.000Z', 'placed', '2026-11-23T00:00:00.000Z'];
    const insert = 'insert into orders (api_key_id, pet_id, quantity, ship_date, status, complete, created_at) values';
    if (file) {
      const other = new SQLite(file);
      other.prepare(`${insert} (?, 1, 1, ?, ?, 0, ?)`).run(...row);
      other.close();
    } else {
      const other = new pg.Client({ connectionString: socket.t.databaseUrl });
      await other.connect();
      await other.query(`${insert} ($1, 1, 1, $2, $3, 0, $4)`, row);
      await other.end();
    }
    const next = await socket.send(list);
    expect(next.laneAnswered).toBe(false);
    expect(JSON.parse(next.body).data).toHaveLength(1);
    expect((await socket.send(list)).laneAnswered).toBe(kept);
  });
});

// The lane asks the SQLite file for news once for the requests read in one turn of the event loop.
if (TEST_STORE === 'sqlite')
  describe('the fast lane on a SQLite file shared with the CLI', () => {
    // `/pets/1` is the lane's to answer; with a query string, Fastify's, whose key lookup trusts the same look.
    it.each(['/pets/1', '/pets/1?x=1'])('sees a revocation committed while a turn is read, at every request sent after it (%s)', async (path) => {
      const file = join(mkdtempSync(join(tmpdir(), 'petstore-lane-')), 'petstore.db');
      const t = await testApp({ sqliteFile: file });
      apps.push(t);
      const key = await t.newKey('pro');
      const { id } = (await t.keys.findByKey(key))!;
      const base = await t.app.listen({ host: '127.0.0.1', port: 0 });
      // The key and the pet in memory: the lane answers.
      expect((await fetch(`${base}/pets/1`, { headers: { 'x-api-key': key } })).status).toBe(200);
      const get = (requestId: string, url = '/pets/1') =>
        `GET ${url} HTTP/1.1\r\nHost: petstore.test\r\nX-API-Key: ${key}\r\nX-Request-Id: ${requestId}\r\n\r\n`;
      const { port } = new URL(base);
      const [first, second] = await Promise.all([opened(Number(port)), opened(Number(port))]);
      // Both connections accepted and read by the server.
      first.socket.write(get('first'));
      second.socket.write(get('second'));
      await Promise.all([first.answers(1), second.answers(1)]);
      const cli = new SQLite(file);
      // `a` and `b` are on their way together, so the server reads them in one turn, `a` first. While it
      // reads `a`, the CLI revokes the key and then the client sends `c` behind `b`: the server reads `c`
      // with `b`, in the same turn, after the commit. A look at the file taken for `a` would let `c` in.
      t.app.server.on('request', (req: { headers: Record<string, unknown> }) => {
        if (req.headers['x-request-id'] !== 'a') return;
        cli.prepare('update api_keys set revoked_at = ? where id = ?').run('2026-11-25T00:00:00.000Z', id);
        second.socket.write(get('c', path));
      });
      first.socket.write(get('a'));
      second.socket.write(get('b'));
      const answers = { ...(await first.answers(2)), ...(await second.answers(3)) };
      cli.close();
      first.socket.destroy();
      second.socket.destroy();
      expect(answers.c).toBe(401);
      // `a` and `b` were sent before the commit: either answer is right.
      expect([200, 401]).toContain(answers.a);
      expect([200, 401]).toContain(answers.b);
      // And the key stays revoked on the lane's path.
      expect((await fetch(`${base}/pets/1`, { headers: { 'x-api-key': key } })).status).toBe(401);
    });
  });

/** A raw connection to `port`, and the statuses of the answers it has received (at least `n`), by their request ids. */
async function opened(port: number): Promise<{ socket: Socket; answers(n: number): Promise<Record<string, number>> }> {
  // No Nagle: a request written while the one before is unacknowledged leaves at once.
  const socket = connect({ port, host: '127.0.0.1', noDelay: true });
  await new Promise((resolve) => socket.once('connect', resolve));
  let text = '';
  socket.setEncoding('latin1').on('data', (chunk: string) => (text += chunk));
  const parsed = () => [...text.matchAll(/HTTP\/1\.1 (\d{3})[^]*?\r\nx-request-id: ([^\r]+)/gi)].map(([, status, id]) => [id!, Number(status)] as const);
  return {
    socket,
    async answers(n) {
      while (parsed().length < n) await new Promise((resolve) => socket.once('data', resolve));
      return Object.fromEntries(parsed());
    },
  };
}
