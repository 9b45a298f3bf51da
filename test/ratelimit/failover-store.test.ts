import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { Redis } from 'ioredis';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.js';
import { createLimiterRedis, FailoverLimiterStore, type LimiterMode } from '../../src/ratelimit/failover-store.js';
import type { Policy } from '../../src/ratelimit/plans.js';
import { limiterKeys } from '../../src/ratelimit/redis-store.js';
import { readLimiterState } from '../../src/ratelimit/redis-state.js';
import type { Verdict } from '../../src/ratelimit/verdict.js';
import { freePort } from '../helpers/process.js';
import { tcpProxy } from '../helpers/proxy.js';
import { type RedisServer, redisServerInstalled, startRedisServer } from '../helpers/redis.js';

const free: Policy = { name: 'free', perMinute: 60, perDay: 1000 };

describe.skipIf(!redisServerInstalled())('FailoverLimiterStore', () => {
  let port: number;
  let server: RedisServer;
  let store: FailoverLimiterStore;
  let logged: { level: 'warn' | 'info'; msg: string }[];
  let switches: LimiterMode[];

  beforeAll(async () => {
    port = await freePort();
  });
  beforeEach(async () => {
    server = await startRedisServer(port);
    const client = createLimiterRedis({ kind: 'single', url: server.url });
    await once(client, 'ready');
    logged = [];
    switches = [];
    const log = {
      warn: (_: object, msg: string) => logged.push({ level: 'warn', msg }),
      info: (_: object, msg: string) => logged.push({ level: 'info', msg }),
    };
    store = new FailoverLimiterStore(client, { clock: systemClock, log, onModeChange: (mode) => switches.push(mode) });
  });
  afterEach(async () => {
    await store.close();
    await server.kill();
  });

  it('decides in memory while Redis is down, returns to Redis by itself and counts nothing twice', async () => {
    const caller = randomUUID();
    expect(store.mode).toBe('redis');
    for (let i = 1; i <= 5; i++) expect(remaining(await store.hit(caller, free))).toBe(60 - i);
    expect(await countedInRedis(caller)).toBe(5);

    await server.kill();
    // Memory starts from nothing: Redis would have said 54, 53, …
    for (let i = 1; i <= 5; i++) expect(remaining(await timed(store.hit(caller, free)))).toBe(60 - i);
    expect(store.mode).toBe('memory');
    expect(logged).toEqual([{ level: 'warn', msg: expect.stringContaining('in memory') }]);
    expect(switches).toEqual(['memory']);

    // The restarted server is empty (no persistence): whatever it counts, it counted after the restart.
    server = await startRedisServer(port);
    await until(() => store.mode === 'redis');
    expect(logged.slice(1)).toEqual([{ level: 'info', msg: expect.stringContaining('in Redis') }]);
    expect(switches).toEqual(['memory', 'redis']);
    for (let i = 1; i <= 3; i++) expect(remaining(await store.hit(caller, free))).toBe(60 - i);
    // Nothing sent during the outage reached Redis after it: it holds only what it decided since.
    expect(await countedInRedis(caller)).toBe(3);
  });

  it('never replays the requests that were in flight when the connection dropped', async () => {
    const caller = randomUUID();
    for (let i = 0; i < 5; i++) await store.hit(caller, free);
    // The pause holds the scripts on the server (unexecuted) while their connection is killed.
    const pausedUntil = Date.now() + 300;
    await pause(server.url, 300, 'WRITE');
    const inFlight = Array.from({ length: 20 }, () => timed(store.hit(caller, free)));
    await killConnections(server.url);
    expect(new Set((await Promise.all(inFlight)).map((verdict) => verdict.kind))).toEqual(new Set(['admitted']));
    await until(() => store.mode === 'redis' && Date.now() > pausedUntil + 100);
    // A replayed script would run now that the pause is over, on the same server.
    expect(await countedInRedis(caller)).toBe(5);
    expect(switches).toEqual(['memory', 'redis']);
  });

  it('falls back on a timeout while connected, and comes back once Redis answers again', async () => {
    const caller = randomUUID();
    await store.hit(caller, free);
    await pause(server.url, 700);
    // One late reply is no outage; several in a row are.
    const verdicts = await Promise.all([1, 2, 3].map(() => timed(store.hit(caller, free))));
    for (const verdict of verdicts) expect(verdict.kind).toBe('admitted');
    expect(store.mode).toBe('memory');
    for (let i = 0; i < 5; i++) await timed(store.hit(caller, free));
    await until(() => store.mode === 'redis');
    expect(logged.map((line) => line.level)).toEqual(['warn', 'info']);
    expect(switches).toEqual(['memory', 'redis']);
    expect((await store.hit(caller, free)).kind).toBe('admitted');
  });

  it('restamps in Redis, and while Redis does not answer, gives up within the bound and says so', async () => {
    const caller = randomUUID();
    const before = (await store.hit(caller, free)).stamp;
    await store.restamp([caller]);
    expect((await store.hit(caller, free)).stamp).not.toBe(before);
    await pause(server.url, 700);
    // The change it stamps is answered anyway: the pages of other instances age out (orders/order-pages.ts).
    await timed(store.restamp([caller]));
    expect(logged.filter((line) => line.msg.startsWith('Redis did not take the stamp'))).toHaveLength(1);
  });

  it('does not take a busy event loop for a Redis outage', async () => {
    const caller = randomUUID();
    await store.hit(caller, free);
    const pending = Array.from({ length: 50 }, () => store.hit(caller, free));
    // The loop is busy well past the timeout while the replies wait to be read.
    const busyUntil = performance.now() + 300;
    while (performance.now() < busyUntil);
    const verdicts = await Promise.all(pending);
    expect(verdicts.every((verdict) => verdict.kind === 'admitted')).toBe(true);
    expect(store.mode).toBe('redis');
    expect(switches).toEqual([]);
    expect(logged).toEqual([]);
    // Every one was decided by Redis, none in memory.
    expect(await countedInRedis(caller)).toBe(51);
  });

  it('waits for replies that keep coming in order, a few at a time, instead of deciding them in memory', async () => {
    // Redis's answers reach the client 500 bytes every 10 ms: fifty scripts' replies (about 10 KB) take 200 ms.
    const proxy = await tcpProxy({ host: '127.0.0.1', port }, { bytes: 500, everyMs: 10 });
    const client = createLimiterRedis({ kind: 'single', url: `redis://127.0.0.1:${proxy.port}` });
    await once(client, 'ready');
    const modes: LimiterMode[] = [];
    const slow = new FailoverLimiterStore(client, {
      clock: systemClock,
      log: { warn: () => {}, info: () => {} },
      onModeChange: (mode) => modes.push(mode),
    });
    try {
      const caller = randomUUID();
      await slow.hit(caller, free);
      const verdicts = await Promise.all(Array.from({ length: 50 }, () => slow.hit(caller, free)));
      // Each decided by Redis, which counted them in order after the first: memory would have said 59.
      expect(verdicts.map(remaining).sort((a, b) => b - a)).toEqual(Array.from({ length: 50 }, (_, i) => 58 - i));
      expect(modes).toEqual([]);
    } finally {
      await slow.close();
      await proxy.close();
    }
  });

  it('switches only after several replies in a row are really late, and answers each within the bound', async () => {
    const caller = randomUUID();
    await store.hit(caller, free);
    await pause(server.url, 1_000);
    expect((await timed(store.hit(caller, free))).kind).toBe('admitted');
    expect(store.mode).toBe('redis');
    expect((await timed(store.hit(caller, free))).kind).toBe('admitted');
    expect(store.mode).toBe('redis');
    expect((await timed(store.hit(caller, free))).kind).toBe('admitted');
    expect(store.mode).toBe('memory');
    expect(logged).toEqual([{ level: 'warn', msg: expect.stringContaining('in memory') }]);
  });

  it('starts in memory when its client is not ready, and still answers', async () => {
    await server.kill();
    const late = new FailoverLimiterStore(createLimiterRedis({ kind: 'single', url: server.url }), {
      clock: systemClock,
      log: { warn: () => {}, info: () => {} },
    });
    expect(late.mode).toBe('memory');
    expect((await timed(late.hit(randomUUID(), free))).kind).toBe('admitted');
    await late.close();
  });

  async function countedInRedis(caller: string): Promise<number> {
    const probe = new Redis(server.url);
    try {
      const packed = await probe.getBuffer(limiterKeys('petstore:', caller)[2]);
      return packed ? readLimiterState(packed).count : 0;
    } finally {
      await probe.quit();
    }
  }
});

/** Holds clients' commands (all, or those that may write, scripts included) on the server for `ms`. */
async function pause(url: string, ms: number, what: 'ALL' | 'WRITE' = 'ALL'): Promise<void> {
  const admin = new Redis(url);
  await admin.call('CLIENT', 'PAUSE', ms, what);
  // Not QUIT: the pause would hold it too.
  admin.disconnect();
}

async function killConnections(url: string): Promise<void> {
  const admin = new Redis(url);
  await admin.client('KILL', 'TYPE', 'normal', 'SKIPME', 'yes');
  await admin.quit();
}

function remaining(verdict: Verdict): number {
  expect(verdict.kind).toBe('admitted');
  return verdict.minute.remaining;
}

/** The call's result, after checking that it came well within a second (the client gives up after 100 ms). */
async function timed<T>(call: Promise<T>): Promise<T> {
  const started = performance.now();
  const result = await call;
  expect(performance.now() - started).toBeLessThan(1000);
  return result;
}

async function until(condition: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`not reached within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
