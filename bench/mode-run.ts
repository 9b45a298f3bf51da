/**
 * One mode's HTTP run (http.ts) as its phases share it: the phases, the rows' names, the run's state,
 * how a row is measured (with, in a mode that has them, its Redis round trips and PostgreSQL queries
 * per request), and a path's floor: bare node:http replaying an answer the service gave.
 */
import { type LoadSettings, type Measured, measure, nth, oneAtATime, type Requests } from './load.js';
import { pgQueriesPerRequest } from './pg-count.js';
import type { RedisCounter } from './redis-count.js';
import { type Proc, startBaseline } from './service.js';
import type { BenchKeys } from './setup.js';

/** Requests sent one at a time to count what each costs in Redis and in PostgreSQL. */
export const ROUND_TRIP_PROBES = 200;
/** The default configuration against `warn`, by turns (load.ts `byTurns`): rounds, and seconds per turn. */
export const CONFIG_ROUNDS = 6;
export const CONFIG_TURN_SECONDS = 2;

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
  peerMemoryAnswer: "Fastify + @fastify/rate-limit (memory store) sending the service's headers",
  peerRedisAnswer: "Fastify + @fastify/rate-limit (Redis store) sending the service's headers",
  peerListOrders: 'Fastify + @fastify/rate-limit (Redis) + pg: GET /store/orders',
  peerPlaceOrder: 'Fastify + @fastify/rate-limit (Redis) + pg: POST /store/orders',
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
  /** What one of those script runs cost Redis, in µs (`INFO commandstats`). */
  redisUsPerScript?: number;
  /** PostgreSQL queries per request in steady state, in a mode with PostgreSQL (see pg-count.ts). */
  pgPerRequest?: number;
}

export type RowRunner = (
  target: Proc,
  path: string,
  expected: number,
  requests: Requests,
  peer?: boolean,
) => Promise<void>;

/** What the phases of one mode's run share. */
export interface ModeRun {
  mode: string;
  env: Record<string, string>;
  settings: LoadSettings;
  /** Whether the run measures `phase` (BENCH_ONLY) and the mode has it. */
  has(phase: HttpPhase): boolean;
  keys: BenchKeys;
  /** The service at `warn`; the over-limit row replaces it with one of its own (refusals.ts). */
  service: Proc;
  /** The service's answer to `GET /pets/1`: what the baseline, the floor and the peers send. */
  answer: Answer;
  /** `GET /pets/1` over the throughput keys. */
  pets: Requests;
  rows: Row[];
  /** Processes started along the way: stopped at the end, whatever happened. */
  others: Proc[];
  /** Measures a row and adds it to `rows` (`rowRunner`). */
  row: RowRunner;
}

/** The order the bench places: one of the first pet, which the catalogue holds available. */
const ORDER = JSON.stringify({ petId: 1, quantity: 1 });
/** `POST` of the bench's order with `key` (bench/ab.ts places the same). */
export const postOrder = (path: string, key: string): Requests[number] => ({
  method: 'POST',
  path,
  headers: { 'content-type': 'application/json', 'x-api-key': key },
  body: ORDER,
});
export const get = (path: string, keys: string[]): Requests =>
  keys.map((key) => ({ method: 'GET', path, headers: { 'x-api-key': key } }));

/** A response as a floor replays it. */
export interface Answer {
  status: number;
  headers: Headers;
  body: string;
}

/** The service's answer to the first of `requests` (an order it places, for a POST). */
export async function answerTo(url: string, requests: Requests): Promise<Answer> {
  const { method, path, headers, body } = nth(requests, 0);
  const response = await fetch(`${url}${path}`, { method, headers, body });
  return { status: response.status, headers: response.headers, body: await response.text() };
}

/**
 * Measures a row, adds it to `rows` and logs it: in steady state, with the Redis round trips per
 * request when `redis` counts them, and the PostgreSQL queries per request when the mode has PostgreSQL.
 */
export function rowRunner(
  mode: string,
  settings: LoadSettings,
  rows: Row[],
  redis: RedisCounter | null,
  postgres: boolean,
): RowRunner {
  return async (target, path, expected, requests, peer = false) => {
    // Steady state: the service has met every key of the row (a spread row's first pass is the growth phase's).
    if (!peer && typeof requests[0]?.setupRequest !== 'function')
      await oneAtATime(target.url, requests, requests.length);
    const measured = await measure(target, requests, settings);
    const trips = redis ? await roundTrips(target, requests, redis) : undefined;
    // Peers have no PostgreSQL; a service is counted on a twin of itself (pg-count.ts).
    const pgPerRequest =
      postgres && target.env ? await pgQueriesPerRequest(target.env, requests, ROUND_TRIP_PROBES) : undefined;
    rows.push({
      path,
      ...(peer ? { peer } : {}),
      expected,
      allExpected: measured.statuses[expected] === measured.requests,
      ...measured,
      redisPerRequest: trips?.perRequest,
      redisUsPerScript: trips?.usPerScript,
      pgPerRequest,
    });
    log(mode, rows.at(-1)!);
  };
}

/**
 * A path's floor: bare node:http sending an answer the service gave (headers, body and status) to the path's requests.
 */
export async function floorRow(run: ModeRun, floorPath: string, given: Answer, requests: Requests): Promise<void> {
  const floor = await startBaseline(given.body, floorHeaders(given.headers), given.status);
  run.others.push(floor);
  await run.row(floor, floorPath, given.status, requests, true);
  await floor.stop();
}

/** The headers of an answer as the service sent them, but those node:http adds to every answer itself. */
export function floorHeaders(headers: Headers): Record<string, string> {
  const added = new Set(['date', 'connection', 'keep-alive', 'transfer-encoding']);
  return Object.fromEntries([...headers].filter(([name]) => !added.has(name)));
}

/**
 * Redis round trips per request, from requests sent one at a time: under load, autocannon's stop
 * abandons up to one request per connection, some after the service has run their script.
 */
async function roundTrips(
  target: Proc,
  requests: Requests,
  redis: RedisCounter,
): Promise<{ perRequest: number; usPerScript: number }> {
  // Let what autocannon left in flight finish first.
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  const before = await redis.sample(target.adminUrl);
  await oneAtATime(target.url, requests, ROUND_TRIP_PROBES);
  const after = await redis.sample(target.adminUrl);
  // A peer has no metrics: its requests are the ones just sent, each answered.
  return {
    perRequest: redis.perRequest(before, after, target.adminUrl ? undefined : ROUND_TRIP_PROBES),
    usPerScript: redis.usPerScript(before, after),
  };
}

function log(mode: string, row: Row): void {
  process.stderr.write(
    `  ${mode}: ${row.path}: ${row.rps} req/s, p99 ${row.p99} ms${row.allExpected ? '' : ` (statuses ${JSON.stringify(row.statuses)})`}\n`,
  );
}
