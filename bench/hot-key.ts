/**
 * One key admitting a million requests a minute, the limiter at full load: what its minute window
 * holds, in this process (the memory store) and, with REDIS_URL, in Redis (the Redis store, its three
 * keys' `MEMORY USAGE`), and what a call costs as the window fills. The million requests are spread
 * evenly over one minute of an injected clock (16 or 17 in each millisecond: every millisecond of the
 * window holds requests, the most entries a window can hold), so the run takes what the calls take, not
 * a minute. Run alone, in a fresh process: `node --expose-gc --import tsx bench/hot-key.ts [--json]`.
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { MemoryLimiterStore } from '../src/ratelimit/memory-store.js';
import type { Policy } from '../src/ratelimit/plans.js';
import { limiterKeys, RedisLimiterStore } from '../src/ratelimit/redis-store.js';
import { MINUTE_MS } from '../src/ratelimit/state.js';

const REQUESTS = 1_000_000;
const POLICY: Policy = { name: 'enterprise', perMinute: REQUESTS, perDay: 10 * REQUESTS };
const START = Date.parse('2024-03-01T12:00:00.000Z');
/** Calls sent to Redis together: the store decides the calls of one turn in one script run. */
const REDIS_BATCH = 500;

export interface HotKeyFigures {
  requests: number;
  inProcess: WindowFigures;
  redis?: WindowFigures;
}

interface WindowFigures {
  admitted: number;
  /** The key's bytes once the minute is full: heap growth after a collection, or Redis's `MEMORY USAGE` of its keys. */
  bytes: number;
  /** µs per call in the window's first and last tenth (when it holds about 10 % and 100 % of its requests). */
  usPerCallFirstTenth: number;
  usPerCallLastTenth: number;
}

/** The instant of the i-th of the minute's requests. */
const instantOf = (i: number) => START + Math.floor((i * MINUTE_MS) / REQUESTS);

async function inProcess(): Promise<WindowFigures> {
  const gc = globalThis.gc;
  if (!gc) throw new Error('run with node --expose-gc');
  let now = START;
  const store = new MemoryLimiterStore({ clock: () => now, sweepIntervalMs: 3_600_000 });
  gc();
  const before = process.memoryUsage().heapUsed;
  let admitted = 0;
  const tenths: number[] = [];
  let tenthStarted = performance.now();
  for (let i = 0; i < REQUESTS; i++) {
    now = instantOf(i);
    if (store.hitNow('key:hot', POLICY)?.kind === 'admitted') admitted++;
    if ((i + 1) % (REQUESTS / 10) === 0) {
      tenths.push(((performance.now() - tenthStarted) * 1000) / (REQUESTS / 10));
      tenthStarted = performance.now();
    }
  }
  gc();
  const bytes = process.memoryUsage().heapUsed - before;
  await store.close();
  return { admitted, bytes, usPerCallFirstTenth: tenths[0]!, usPerCallLastTenth: tenths[9]! };
}

async function inRedis(url: string): Promise<WindowFigures> {
  let now = START;
  const prefix = `bench-hot-${randomBytes(4).toString('hex')}:`;
  const redis = new Redis(url);
  const store = new RedisLimiterStore(new Redis(url), { clock: () => now, prefix });
  let admitted = 0;
  const tenths: number[] = [];
  let tenthStarted = performance.now();
  try {
    for (let i = 0; i < REQUESTS; i += REDIS_BATCH) {
      // One turn's calls, each at its own instant: the clock is read as each call is made.
      const calls: Promise<{ kind: string }>[] = [];
      for (let j = i; j < i + REDIS_BATCH; j++) {
        now = instantOf(j);
        calls.push(store.hit('key:hot', POLICY));
      }
      for (const verdict of await Promise.all(calls)) if (verdict.kind === 'admitted') admitted++;
      if ((i + REDIS_BATCH) % (REQUESTS / 10) === 0) {
        tenths.push(((performance.now() - tenthStarted) * 1000) / (REQUESTS / 10));
        tenthStarted = performance.now();
      }
    }
    let bytes = 0;
    for (const key of limiterKeys(prefix, 'key:hot'))
      bytes += Number(await redis.call('MEMORY', 'USAGE', key, 'SAMPLES', '0')) || 0;
    return { admitted, bytes, usPerCallFirstTenth: tenths[0]!, usPerCallLastTenth: tenths[9]! };
  } finally {
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.unlink(...keys);
    await store.close();
    await redis.quit();
  }
}

export async function hotKeyFigures(redisUrl: string | undefined): Promise<HotKeyFigures> {
  return { requests: REQUESTS, inProcess: await inProcess(), ...(redisUrl ? { redis: await inRedis(redisUrl) } : {}) };
}

export function hotKeyTable(h: HotKeyFigures): Record<string, string>[] {
  const row = (where: string, target: string, w: WindowFigures) => ({
    '': `${where}: ${h.requests.toLocaleString('en')} requests in one minute`,
    admitted: w.admitted.toLocaleString('en'),
    'window holds': `${(w.bytes / 1024 / 1024).toFixed(2)} MB (target ≤ ${target})`,
    'µs/call, first → last tenth': `${w.usPerCallFirstTenth.toFixed(2)} → ${w.usPerCallLastTenth.toFixed(2)}`,
  });
  return [row('in process', '4 MB', h.inProcess), ...(h.redis ? [row('Redis', '2 MB', h.redis)] : [])];
}

if (process.argv[1] === new URL(import.meta.url).pathname) {
  const h = await hotKeyFigures(process.env.REDIS_URL || undefined);
  if (process.argv.includes('--json')) console.log(JSON.stringify(h));
  else console.table(hotKeyTable(h));
}
