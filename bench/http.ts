/**
 * The HTTP benchmark of one mode: the baseline, then each path against the real service, the same
 * path at the default log level, the peers (plain Fastify with @fastify/rate-limit) and, embedded,
 * growth (a store of a million keys and a million orders) and events (orders falling due, a million
 * events: events.ts), all with the same autocannon settings.
 * Load on the throughput paths is spread over many enterprise keys (as many customers would send
 * it); one row puts a whole run on a single key, on purpose.
 */
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { dirname } from 'node:path';
import {
  type EventGrowthFigures,
  type FulfilmentFigures,
  measureEventGrowth,
  measureFulfilment,
  measureRetention,
  measureStuckReceiver,
  type RetentionFigures,
  type StuckReceiverFigures,
} from './events.js';
import { GROWTH, growthStore } from './growth.js';
import { type ByTurns, byTurns, type LoadSettings, type Measured, measure, nth, oneAtATime, type Requests, sendAll, spread } from './load.js';
import { pgQueriesPerRequest } from './pg-count.js';
import { type RedisCounter, redisCounter } from './redis-count.js';
import { type Proc, startBaseline, startPeer, startService } from './service.js';
import { type BenchKeys, createKeys } from './setup.js';

/** Enough keys that no one key's limiter state grows large within a run. */
const KEYS_PER_PATH = 500;
/** Requests sent one at a time to count what each costs in Redis and in PostgreSQL. */
const ROUND_TRIP_PROBES = 200;
/** The 429 run needs keys that stay over their limit without being banned; see `measureRefusals`. */
const LIMITED_KEYS = 100;
/** The default configuration against `warn`, by turns (load.ts `byTurns`): rounds, and seconds per turn. */
const CONFIG_ROUNDS = 6;
const CONFIG_TURN_SECONDS = 2;
/** `GET /pets/{petId}` over 100,000 of a million keys against the small store, by turns: rounds, seconds per turn. */
const GROWTH_ROUNDS = 4;
const GROWTH_TURN_SECONDS = 3;

/** The rows, by name: targets.ts finds them by these. */
export const PATHS = {
  pets: 'GET /pets/{petId}',
  defaultConfig: 'GET /pets/{petId}, default config (LOG_LEVEL=info)',
  floor: "node:http sending the service's answer (floor)",
  bannedFloor: "node:http sending the service's 429 to a banned key (floor)",
  overLimitFloor: "node:http sending the service's 429 to a key over its limit (floor)",
  listOrdersFloor: "node:http sending the service's answer to GET /store/orders (floor)",
  placeOrderFloor: "node:http sending the service's answer to POST /store/orders (floor)",
  peerMemory: 'Fastify + @fastify/rate-limit (memory store)',
  peerRedis: 'Fastify + @fastify/rate-limit (Redis store)',
  listOrders: 'GET /store/orders',
  placeOrder: 'POST /store/orders',
  banned: '429, banned key',
  hotKey: 'GET /pets/{petId}, one hot key',
  overLimit: '429, key over its limit',
  ordersFirstPage: 'GET /store/orders, 1M orders, first page',
  ordersDeepCursor: 'GET /store/orders, 1M orders, deep cursor',
  manyKeys: 'GET /pets/{petId}, 100k of 1M keys',
} as const;

/**
 * The parts of a mode's run (BENCH_ONLY in run.ts): the service's paths, the same path at the default
 * log level, the peers, and growth (embedded mode only). The baseline runs whenever one of them does.
 */
export const HTTP_PHASES = ['paths', 'config', 'peers', 'growth', 'events'] as const;
export type HttpPhase = (typeof HTTP_PHASES)[number];

export interface Row extends Measured {
  path: string;
  /** A peer (plain Fastify with @fastify/rate-limit), not the service. */
  peer?: boolean;
  /** What every response of the row should be, and whether all were. */
  expected: number;
  allExpected: boolean;
  /** Redis round trips (script runs) per request, in a mode with Redis. */
  redisPerRequest?: number;
  /** PostgreSQL queries per request in steady state, in a mode with PostgreSQL (see pg-count.ts). */
  pgPerRequest?: number;
}

export interface GrowthFigures {
  keys: number;
  usedKeys: number;
  orders: number;
  /** Writing the store, before the service starts: out of every timed part. */
  setupSeconds: number;
  /** The untimed pass that sends every one of the used keys once: the service meets each for the first time. */
  firstSightSeconds: number;
  /** The service's RSS before that pass and after the timed run over the same keys. */
  rssBeforeBytes: number;
  rssAfterBytes: number;
  /** (after − before) ÷ used keys: with a key cache, the memory per cached key. */
  rssBytesPerKey: number;
  /**
   * req/s of `GET /pets/{petId}` over the used keys of the big store, over a service's on the small
   * store over its 500 keys, by turns, both sent alike (`spread`: a key per request). Measured as two
   * rows minutes apart, the pair moved by the machine's drift, and by the load generator's work: the
   * small-store row sends a fixed list, which costs autocannon about 4 µs less per request.
   */
  manyKeysByTurns?: ByTurns;
}

export interface ModeResult {
  mode: string;
  /** What the mode runs on, for people. */
  stores: string;
  env: Record<string, string>;
  baseline: Measured;
  rows: Row[];
  /** req/s of the default configuration (`LOG_LEVEL=info`) over `warn`'s on `GET /pets/{petId}`, by turns. */
  defaultConfigByTurns?: ByTurns;
  /**
   * Each refusal against admissions, by turns on the service that refuses (b: the refusals, a: `GET
   * /pets/{petId}` over its 500 keys): req/s, and the CPU µs per request of each, which the target
   * compares. As rows a minute apart the two CPU figures differ by the machine's drift.
   */
  refusalsByTurns?: { banned?: ByTurns; overLimit?: ByTurns };
  /**
   * `GET /pets/{petId}` against what its ratio targets name, by turns (b: the service, a: the other):
   * the bare baseline, and scaled-out @fastify/rate-limit's Redis store. As rows a few seconds or
   * minutes apart the same build read 0.51–0.62× of the baseline and 0.66–0.76 of the peer in one day.
   */
  petsByTurns?: { baseline?: ByTurns; peerRedis?: ByTurns };
  growth?: GrowthFigures;
  /** Embedded: 100,000 orders falling due at once, and `GET /events` with a million events (events.ts). */
  fulfilment?: FulfilmentFigures;
  retention?: RetentionFigures;
  stuckReceiver?: StuckReceiverFigures;
  eventGrowth?: EventGrowthFigures;
}

type RowRunner = (target: Proc, path: string, expected: number, requests: Requests, peer?: boolean) => Promise<void>;

/** The order the bench places: one of the first pet, which the catalogue holds available. */
const ORDER = JSON.stringify({ petId: 1, quantity: 1 });
/** `POST` of the bench's order with `key` (bench/ab.ts places the same). */
export const postOrder = (path: string, key: string): Requests[number] => ({
  method: 'POST',
  path,
  headers: { 'content-type': 'application/json', 'x-api-key': key },
  body: ORDER,
});
const get = (path: string, keys: string[]): Requests => keys.map((key) => ({ method: 'GET', path, headers: { 'x-api-key': key } }));

/** One mode's rows, in the phases asked for; null when none of them applies to the mode. */
export async function benchMode(
  mode: string,
  stores: string,
  env: Record<string, string>,
  settings: LoadSettings,
  phases: ReadonlySet<HttpPhase>,
): Promise<ModeResult | null> {
  const postgres = env.DATABASE_URL!.startsWith('postgres');
  const has = (phase: HttpPhase) => phases.has(phase) && !((phase === 'growth' || phase === 'events') && postgres);
  if (!HTTP_PHASES.some(has)) return null;
  const redisUrls = env.REDIS_URL ? [env.REDIS_URL] : env.REDIS_CLUSTER_NODES ? env.REDIS_CLUSTER_NODES.split(',').map((node) => `redis://${node}`) : [];
  const redis = redisUrls.length > 0 ? await redisCounter(redisUrls) : null;
  let service = await startService(env);
  const keys = await createKeys(env.DATABASE_URL!, { perPath: KEYS_PER_PATH, limited: LIMITED_KEYS });
  const answer = await fetch(`${service.url}/pets/1`, { headers: { 'x-api-key': keys.hot } });
  const body = await answer.text();
  const baselineProc = await startBaseline(body);
  const rows: Row[] = [];
  const others: Proc[] = [];
  let defaultConfigByTurns: ByTurns | undefined;
  const refusalsByTurns: NonNullable<ModeResult['refusalsByTurns']> = {};
  const petsByTurns: NonNullable<ModeResult['petsByTurns']> = {};
  /** `GET /pets/{petId}` of the service (still at `warn`) against `other` on the same requests, by turns. */
  const petsAgainst = async (other: Proc, name: string, requests: Requests) => {
    const turns = await byTurns(other, service, requests, settings.connections, CONFIG_ROUNDS, CONFIG_TURN_SECONDS);
    process.stderr.write(`  ${mode}: ${PATHS.pets} ÷ ${name} by turns: median ${turns.median} (${turns.ratios.join(', ')})\n`);
    return turns;
  };
  try {
    // The baseline stays up for the comparison by turns (its figures are measured first).
    const baseline = await measure(baselineProc, get('/pets/1', keys.pets), settings);
    const row: RowRunner = async (target, path, expected, requests, peer = false) => {
      // Steady state: the service has met every key of the row (a spread row's first pass is the growth phase's).
      if (!peer && typeof requests[0]?.setupRequest !== 'function') await oneAtATime(target.url, requests, requests.length);
      const measured = await measure(target, requests, settings);
      const redisPerRequest = redis ? await roundTrips(target, requests, redis) : undefined;
      // Peers have no PostgreSQL; a service is counted on a twin of itself (pg-count.ts).
      const pgPerRequest = postgres && target.env ? await pgQueriesPerRequest(target.env, requests, ROUND_TRIP_PROBES) : undefined;
      rows.push({
        path,
        ...(peer ? { peer } : {}),
        expected,
        allExpected: measured.statuses[expected] === measured.requests,
        ...measured,
        redisPerRequest,
        pgPerRequest,
      });
      log(mode, rows.at(-1)!);
    };
    /** A path's floor: bare node:http sending an answer the service gave (headers, body and status) to the path's requests. */
    const floorRow = async (floorPath: string, given: Answer, requests: Requests) => {
      const floor = await startBaseline(given.body, floorHeaders(given.headers), given.status);
      others.push(floor);
      await row(floor, floorPath, given.status, requests, true);
      await floor.stop();
    };
    // The rows compared by a target run side by side, so that a change in the machine's load between
    // them weighs as little as it can.
    const pets = get('/pets/1', keys.pets);
    if (has('paths')) {
      await row(service, PATHS.pets, 200, pets);
      petsByTurns.baseline = await petsAgainst(baselineProc, 'the baseline', pets);
    }
    await baselineProc.stop();
    if (has('config')) {
      // The service as started by default: an access-log line per request on stdout (see spawnProc).
      const chatty = await startService({ ...env, LOG_LEVEL: 'info' });
      others.push(chatty);
      await row(chatty, PATHS.defaultConfig, 200, pets);
      // The service at `warn` is still up when its paths are measured: the two levels by turns.
      if (has('paths')) {
        defaultConfigByTurns = await byTurns(service, chatty, pets, settings.connections, CONFIG_ROUNDS, CONFIG_TURN_SECONDS);
        process.stderr.write(`  ${mode}: default config ÷ warn by turns: median ${defaultConfigByTurns.median} (${defaultConfigByTurns.ratios.join(', ')})\n`);
      }
      await chatty.stop();
    }
    if (has('peers')) {
      // The floor: the service's own answer, headers and all, from bare node:http.
      await floorRow(PATHS.floor, { status: answer.status, headers: answer.headers, body }, pets);
      const memoryPeer = await startPeer(body, null);
      others.push(memoryPeer);
      await row(memoryPeer, PATHS.peerMemory, 200, pets, true);
      await memoryPeer.stop();
      if (env.REDIS_URL) {
        const redisPeer = await startPeer(body, { redisUrl: env.REDIS_URL, nameSpace: `bench-peer-${randomBytes(4).toString('hex')}:` });
        others.push(redisPeer);
        await row(redisPeer, PATHS.peerRedis, 200, pets, true);
        if (has('paths')) petsByTurns.peerRedis = await petsAgainst(redisPeer, PATHS.peerRedis, pets);
        await redisPeer.stop();
      }
    }
    if (has('paths')) {
      const listOrders = get('/store/orders', keys.listOrders);
      await row(service, PATHS.listOrders, 200, listOrders);
      if (has('peers')) await floorRow(PATHS.listOrdersFloor, await answerTo(service.url, listOrders), listOrders);
      const placeOrders = keys.placeOrders.map((key) => postOrder('/store/orders', key));
      await row(service, PATHS.placeOrder, 201, placeOrders);
      if (has('peers')) await floorRow(PATHS.placeOrderFloor, await answerTo(service.url, placeOrders), placeOrders);
      const refusal = await ban(service.url, keys.banned);
      await row(service, PATHS.banned, 429, get('/pets/1', [keys.banned]));
      // Within the ban's minute: the row's 11 s and these 24.
      refusalsByTurns.banned = await refusalByTurns(mode, PATHS.banned, service, pets, get('/pets/1', [keys.banned]), settings);
      // The floor of a refusal: that 429, headers and problem body, from bare node:http.
      if (has('peers')) await floorRow(PATHS.bannedFloor, refusal, get('/pets/1', [keys.banned]));
      await row(service, PATHS.hotKey, 200, get('/pets/1', [keys.hot]));
      await service.stop();
      const overLimit = get('/pets/1', keys.limited);
      let refused: Answer;
      [service, refused] = await measureRefusals(env, keys, row);
      refusalsByTurns.overLimit = await refusalByTurns(mode, PATHS.overLimit, service, pets, overLimit, settings);
      // Last: the floor replays its one answer, so the keys' minute may end meanwhile.
      if (has('peers')) await floorRow(PATHS.overLimitFloor, refused, overLimit);
    }
    await service.stop();
    const growth = has('growth') ? await measureGrowth(mode, env, settings, row, keys.pets) : undefined;
    const fulfilment = has('events') ? await measureFulfilment(mode, env, settings) : undefined;
    const retention = has('events') ? await measureRetention(mode, env) : undefined;
    const stuckReceiver = has('events') ? await measureStuckReceiver(mode, env, settings) : undefined;
    const eventGrowth = has('events') ? await measureEventGrowth(mode, env, settings) : undefined;
    return {
      mode,
      stores,
      env: redacted(env),
      baseline,
      rows,
      ...(defaultConfigByTurns ? { defaultConfigByTurns } : {}),
      ...(has('paths') ? { refusalsByTurns, petsByTurns } : {}),
      ...(growth ? { growth } : {}),
      ...(fulfilment ? { fulfilment } : {}),
      ...(retention ? { retention } : {}),
      ...(stuckReceiver ? { stuckReceiver } : {}),
      ...(eventGrowth ? { eventGrowth } : {}),
    };
  } finally {
    await Promise.all([service.stop(), baselineProc.stop(), ...others.map((p) => p.stop())]);
    await redis?.close();
  }
}

/** The headers of an answer as the service sent them, but those node:http adds to every answer itself. */
function floorHeaders(headers: Headers): Record<string, string> {
  const added = new Set(['date', 'connection', 'keep-alive', 'transfer-encoding']);
  return Object.fromEntries([...headers].filter(([name]) => !added.has(name)));
}

/**
 * Redis round trips per request, from requests sent one at a time: under load, autocannon's stop
 * abandons up to one request per connection, some after the service has run their script.
 */
async function roundTrips(target: Proc, requests: Requests, redis: RedisCounter): Promise<number> {
  // Let what autocannon left in flight finish first.
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  const before = await redis.sample(target.adminUrl);
  await oneAtATime(target.url, requests, ROUND_TRIP_PROBES);
  // A peer has no metrics: its requests are the ones just sent, each answered.
  return redis.perRequest(before, await redis.sample(target.adminUrl), target.adminUrl ? undefined : ROUND_TRIP_PROBES);
}

/**
 * Growth, on a store of its own (growth.ts) and a service of its own: one key's million orders, a
 * page at the start and one near the end; then `GET /pets/{petId}` spread evenly over 100,000 of the
 * million keys, after an untimed pass that shows the service each of them once, with the service's
 * RSS before that pass and after the run.
 */
async function measureGrowth(mode: string, env: Record<string, string>, settings: LoadSettings, row: RowRunner, smallKeys: string[]): Promise<GrowthFigures> {
  const store = await growthStore();
  process.stderr.write(
    `  ${mode}: growth set-up: ${GROWTH.keys.toLocaleString('en')} keys and ${GROWTH.orders.toLocaleString('en')} orders written in ${store.setupSeconds.toFixed(1)} s\n`,
  );
  const service = await startService({ ...env, DATABASE_URL: store.file });
  try {
    const owner = [store.ordersKey];
    for (const path of ['/store/orders', `/store/orders?cursor=${store.deepCursor}`]) {
      const page = (await (await fetch(`${service.url}${path}`, { headers: { 'x-api-key': store.ordersKey } })).json()) as { data?: unknown[] };
      if (page.data?.length !== 20) throw new Error(`${path} did not answer a full page: ${JSON.stringify(page).slice(0, 300)}`);
    }
    await row(service, PATHS.ordersFirstPage, 200, get('/store/orders', owner));
    await row(service, PATHS.ordersDeepCursor, 200, get(`/store/orders?cursor=${store.deepCursor}`, owner));

    const requests = spread('/pets/1', store.keys);
    const rssBeforeBytes = service.rssBytes();
    const firstSight = await sendAll(service.url, requests, store.keys.length, settings.connections);
    if (firstSight.statuses[200] !== store.keys.length || firstSight.errors > 0) {
      throw new Error(`the first sight of ${store.keys.length} keys answered ${JSON.stringify(firstSight.statuses)}, ${firstSight.errors} errors`);
    }
    await row(service, PATHS.manyKeys, 200, requests);
    const rssAfterBytes = service.rssBytes();
    // The same against the small store, by turns, both sent alike.
    const small = await startService(env);
    let manyKeysByTurns: ByTurns;
    try {
      const smallRequests = spread('/pets/1', smallKeys);
      await oneAtATime(small.url, smallRequests, smallKeys.length);
      manyKeysByTurns = await byTurns(small, service, { a: smallRequests, b: requests }, settings.connections, GROWTH_ROUNDS, GROWTH_TURN_SECONDS);
    } finally {
      await small.stop();
    }
    process.stderr.write(`  ${mode}: ${PATHS.manyKeys} ÷ the small store by turns: median ${manyKeysByTurns.median} (${manyKeysByTurns.ratios.join(', ')})\n`);
    const growth: GrowthFigures = {
      keys: GROWTH.keys,
      usedKeys: store.keys.length,
      orders: GROWTH.orders,
      setupSeconds: Math.round(store.setupSeconds * 10) / 10,
      firstSightSeconds: Math.round(firstSight.seconds * 10) / 10,
      rssBeforeBytes,
      rssAfterBytes,
      rssBytesPerKey: Math.round((rssAfterBytes - rssBeforeBytes) / store.keys.length),
      manyKeysByTurns,
    };
    process.stderr.write(`  ${mode}: ${growthLine(growth)}\n`);
    return growth;
  } finally {
    await service.stop();
    rmSync(dirname(store.file), { recursive: true, force: true });
  }
}

/** The growth figures in a sentence, for the console. */
export function growthLine(g: GrowthFigures): string {
  const mb = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MB`;
  return (
    `growth: store of ${g.keys.toLocaleString('en')} keys and ${g.orders.toLocaleString('en')} orders written in ${g.setupSeconds} s; ` +
    `first sight of ${g.usedKeys.toLocaleString('en')} keys ${g.firstSightSeconds} s; ` +
    `RSS ${mb(g.rssBeforeBytes)} → ${mb(g.rssAfterBytes)}: ${g.rssBytesPerKey.toLocaleString('en')} bytes of RSS per key seen`
  );
}

/** A response as a floor replays it. */
interface Answer {
  status: number;
  headers: Headers;
  body: string;
}

/** The service's answer to the first of `requests` (an order it places, for a POST). */
async function answerTo(url: string, requests: Requests): Promise<Answer> {
  const { method, path, headers, body } = nth(requests, 0);
  const response = await fetch(`${url}${path}`, { method, headers, body });
  return { status: response.status, headers: response.headers, body: await response.text() };
}

/**
 * The over-limit row. With the default ban rules a key over its limit is banned after its 10th 429,
 * so the 429 path cannot be held for a whole run. This run uses a second service on the same store
 * that bans only after a billion 429s in one second; each key's log of 429s then holds about a
 * second's worth (req/s ÷ LIMITED_KEYS: some tens of entries, where the default rules keep at most
 * 10). Returns that service, still running, and one of its 429s (for the row's floor).
 */
async function measureRefusals(env: Record<string, string>, keys: BenchKeys, row: RowRunner): Promise<[Proc, Answer]> {
  const service = await startService({ ...env, BAN_AFTER_REJECTIONS: '1000000000', BAN_WITHIN_SECONDS: '1' });
  const { limited } = keys;
  // Exhaust each free key's minute (60 requests), a chain per key.
  await Promise.all(
    limited.map(async (key) => {
      for (let i = 0; i < 60; i++) await fetch(`${service.url}/pets/1`, { headers: { 'x-api-key': key } }).then((r) => r.arrayBuffer());
    }),
  );
  const refused = await answerTo(service.url, get('/pets/1', limited));
  await row(service, PATHS.overLimit, 429, get('/pets/1', limited));
  return [service, refused];
}

/** Refusals (`refused`) against admissions (`admitted`, met before) on one service, by turns. */
async function refusalByTurns(mode: string, path: string, service: Proc, admitted: Requests, refused: Requests, settings: LoadSettings): Promise<ByTurns> {
  await oneAtATime(service.url, admitted, admitted.length);
  const turns = await byTurns(service, service, { a: admitted, b: refused }, settings.connections, CONFIG_ROUNDS, CONFIG_TURN_SECONDS);
  // Refusals throughout: a ban or a minute that ended during the turns would measure something else.
  if (Object.keys(turns.statuses.b).some((status) => status !== '429') || Object.keys(turns.statuses.a).some((status) => status !== '200'))
    throw new Error(`${path} by turns: answered ${JSON.stringify(turns.statuses)}`);
  const { a, b } = turns.cpuUsPerRequest;
  process.stderr.write(`  ${mode}: ${path} ÷ ${PATHS.pets} by turns: median ${turns.median} (${turns.ratios.join(', ')}), CPU ${b} against ${a} µs\n`);
  return turns;
}

/**
 * Bans the key (60 admitted, then 429s until the ban); the answer of a request during the ban. Ten 429s
 * within a minute ban a free key for 60 s: long enough for the banned row and its turns (about 35 s at
 * BENCH_DURATION=10).
 */
async function ban(url: string, key: string): Promise<Answer> {
  for (let i = 0; i < 71; i++) {
    const response = await fetch(`${url}/pets/1`, { headers: { 'x-api-key': key } });
    const text = await response.text();
    if (i === 70 && !text.includes('key-banned')) throw new Error(`the key was not banned: ${text}`);
  }
  const banned = await fetch(`${url}/pets/1`, { headers: { 'x-api-key': key } });
  return { status: banned.status, headers: banned.headers, body: await banned.text() };
}

function redacted(env: Record<string, string>): Record<string, string> {
  const shown: Record<string, string> = {};
  for (const [name, value] of Object.entries(env))
    shown[name] = name === 'DATABASE_URL' && !value.startsWith('postgres') ? '(fresh SQLite file)' : value.replace(/\/\/[^@/]*@/, '//');
  return shown;
}

function log(mode: string, row: Row): void {
  process.stderr.write(`  ${mode}: ${row.path}: ${row.rps} req/s, p99 ${row.p99} ms${row.allExpected ? '' : ` (statuses ${JSON.stringify(row.statuses)})`}\n`);
}
