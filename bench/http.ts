/**
 * The HTTP benchmark of one mode: the baseline, then each path against the real service, all with
 * the same autocannon settings. Load on the throughput paths is spread over many enterprise keys
 * (as many customers would send it); one row puts a whole run on a single key, on purpose.
 */
import { measure, type LoadSettings, type Measured, type Requests } from './load.js';
import { redisCounter, type RedisCounter } from './redis-count.js';
import { startBaseline, startService, type Proc } from './service.js';
import { createKeys, type BenchKeys } from './setup.js';

/** Enough keys that no one key's limiter state grows large within a run. */
const KEYS_PER_PATH = 500;
const ROUND_TRIP_PROBES = 200;
/** The 429 run needs keys that stay over their limit without being banned; see `measureRefusals`. */
const LIMITED_KEYS = 100;

export interface Row extends Measured {
  path: string;
  /** What every response of the row should be, and whether all were. */
  expected: number;
  allExpected: boolean;
  /** Redis round trips (script runs) per request, in a mode with Redis. */
  redisPerRequest?: number;
}

export interface ModeResult {
  mode: string;
  /** What the mode runs on, for people. */
  stores: string;
  env: Record<string, string>;
  baseline: Measured;
  rows: Row[];
}

type RowRunner = (target: Proc, path: string, expected: number, requests: Requests) => Promise<void>;

const json = { 'content-type': 'application/json' };
const get = (path: string, keys: string[]): Requests => keys.map((key) => ({ method: 'GET', path, headers: { 'x-api-key': key } }));

export async function benchMode(mode: string, stores: string, env: Record<string, string>, settings: LoadSettings): Promise<ModeResult> {
  const redis = env.REDIS_URL ? await redisCounter(env.REDIS_URL) : null;
  let service = await startService(env);
  const keys = await createKeys(env.DATABASE_URL!, { perPath: KEYS_PER_PATH, limited: LIMITED_KEYS });
  const body = await (await fetch(`${service.url}/pets/1`, { headers: { 'x-api-key': keys.hot } })).text();
  const baselineProc = await startBaseline(body);
  const rows: Row[] = [];
  try {
    const baseline = await measure(baselineProc, get('/pets/1', keys.pets), settings);
    await baselineProc.stop();
    const row: RowRunner = async (target, path, expected, requests) => {
      const measured = await measure(target, requests, settings);
      const redisPerRequest = redis ? await roundTrips(target, requests, redis) : undefined;
      rows.push({ path, expected, allExpected: measured.statuses[expected] === measured.requests, ...measured, redisPerRequest });
      log(mode, rows.at(-1)!);
    };
    await row(service, 'GET /pets/{petId}', 200, get('/pets/1', keys.pets));
    await row(service, 'GET /store/orders', 200, get('/store/orders', keys.listOrders));
    const order = JSON.stringify({ petId: 1, quantity: 1 });
    await row(service, 'POST /store/orders', 201, keys.placeOrders.map((key) => ({ method: 'POST', path: '/store/orders', headers: { ...json, 'x-api-key': key }, body: order })));
    await ban(service.url, keys.banned);
    await row(service, '429, banned key', 429, get('/pets/1', [keys.banned]));
    await row(service, 'GET /pets/{petId}, one hot key', 200, get('/pets/1', [keys.hot]));
    await service.stop();
    service = await measureRefusals(env, keys, row);
    return { mode, stores, env: redacted(env), baseline, rows };
  } finally {
    await Promise.all([service.stop(), baselineProc.stop()]);
    await redis?.close();
  }
}

/**
 * Redis round trips per request, from requests sent one at a time: under load, autocannon's stop
 * abandons up to one request per connection, some after the service has run their script.
 */
async function roundTrips(target: Proc, requests: Requests, redis: RedisCounter): Promise<number> {
  // Let what autocannon left in flight finish first.
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  const before = await redis.sample(target.adminUrl!);
  for (let i = 0; i < ROUND_TRIP_PROBES; i++) {
    const { method, path, headers, body } = requests[i % requests.length]!;
    const response = await fetch(`${target.url}${path}`, { method, headers: headers as Record<string, string>, body: body as string | undefined });
    await response.arrayBuffer();
  }
  return redis.perRequest(before, await redis.sample(target.adminUrl!));
}

/**
 * With the default ban rules a key over its limit is banned after its 10th 429, so the 429 path
 * cannot be held for a whole run. This run uses a second service on the same store that bans only
 * after a billion 429s in one second; each key's log of 429s then holds about a second's worth
 * (req/s ÷ LIMITED_KEYS: some tens of entries, where the default rules keep at most 10).
 */
async function measureRefusals(env: Record<string, string>, keys: BenchKeys, row: RowRunner): Promise<Proc> {
  const service = await startService({ ...env, BAN_AFTER_REJECTIONS: '1000000000', BAN_WITHIN_SECONDS: '1' });
  const { limited } = keys;
  // Exhaust each free key's minute (60 requests), a chain per key.
  await Promise.all(limited.map(async (key) => {
    for (let i = 0; i < 60; i++) await fetch(`${service.url}/pets/1`, { headers: { 'x-api-key': key } }).then((r) => r.arrayBuffer());
  }));
  await row(service, '429, key over its limit', 429, get('/pets/1', limited));
  return service;
}

/** Ten 429s within a minute ban a free key for 60 s: long enough for a run of BENCH_DURATION up to ~50 s. */
async function ban(url: string, key: string): Promise<void> {
  for (let i = 0; i < 71; i++) {
    const response = await fetch(`${url}/pets/1`, { headers: { 'x-api-key': key } });
    const text = await response.text();
    if (i === 70 && !text.includes('key-banned')) throw new Error(`the key was not banned: ${text}`);
  }
}

function redacted(env: Record<string, string>): Record<string, string> {
  const shown: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) shown[name] = name === 'DATABASE_URL' && !value.startsWith('postgres') ? '(fresh SQLite file)' : value.replace(/\/\/[^@/]*@/, '//');
  return shown;
}

function log(mode: string, row: Row): void {
  process.stderr.write(`  ${mode}: ${row.path}: ${row.rps} req/s, p99 ${row.p99} ms${row.allExpected ? '' : ` (statuses ${JSON.stringify(row.statuses)})`}\n`);
}
