/**
 * The HTTP benchmark of one mode: the baseline, then each path against the real service, the same
 * path at the default log level, the peers (plain Fastify with @fastify/rate-limit) and, embedded,
 * growth (a store of a million keys and a million orders: growth.ts) and events (orders falling due,
 * a million events: events.ts), all with the same autocannon settings. What the phases share, and
 * how a row is measured: mode-run.ts; the refusals of the paths phase: refusals.ts.
 * Load on the throughput paths is spread over many enterprise keys (as many customers would send
 * it); one row puts a whole run on a single key, on purpose.
 */
import { randomBytes } from 'node:crypto';
import { type AdvanceFigures, measureAdvance } from './advance.js';
import { measureTestKeys, type TestKeyFigures } from './test-keys.js';
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
import { type GrowthFigures, measureGrowth } from './growth.js';
import { type ByTurns, byTurns, type LoadSettings, type Measured, measure, oneAtATime, sendAll } from './load.js';
import {
  type Answer,
  answerTo,
  CONFIG_ROUNDS,
  CONFIG_TURN_SECONDS,
  floorHeaders,
  floorRow,
  get,
  HTTP_PHASES,
  type HttpPhase,
  type ModeRun,
  PATHS,
  postOrder,
  type Row,
  rowRunner,
} from './mode-run.js';
import { redisCounter } from './redis-count.js';
import { LIMITED_KEYS, measureBanned, measureOverLimit } from './refusals.js';
import { type Proc, startBaseline, startPeer, startService } from './service.js';
import { measureUnknownKeys, type UnknownKeyFigures } from './unknown-keys.js';
import { createKeys } from './setup.js';
import { measureVersions, type VersionFigures } from './versions.js';

/** Enough keys that no one key's limiter state grows large within a run. */
const KEYS_PER_PATH = 500;

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
   * minutes apart the same build's ratios to both moved with the machine's drift.
   */
  petsByTurns?: { baseline?: ByTurns; peerRedis?: ByTurns; peerMemoryAnswer?: ByTurns; peerRedisAnswer?: ByTurns };
  /**
   * Scaled out: the store's orders against the peer a user would write (bench/peer.ts, `pg` and
   * @fastify/rate-limit's Redis store), by turns (b: the service, with fulfilment off: nothing moves
   * its orders meanwhile; a: the peer), on the same keys and orders (issue 32).
   */
  ordersByTurns?: { list: ByTurns; place: ByTurns };
  growth?: GrowthFigures;
  /** With PostgreSQL: a flood of keys nobody created (unknown-keys.ts). */
  unknownKeys?: UnknownKeyFigures;
  /** Embedded: 100,000 orders falling due at once, and `GET /events` with a million events (events.ts). */
  fulfilment?: FulfilmentFigures;
  retention?: RetentionFigures;
  stuckReceiver?: StuckReceiverFigures;
  advance?: AdvanceFigures;
  /** A test key's request against a live key's (bench/test-keys.ts). */
  testKeys?: TestKeyFigures;
  eventGrowth?: EventGrowthFigures;
  /** The oldest version against the newest, by turns on one service (versions.ts). */
  versionsByTurns?: VersionFigures;
}

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
  const redisUrls = env.REDIS_URL
    ? [env.REDIS_URL]
    : env.REDIS_CLUSTER_NODES
      ? env.REDIS_CLUSTER_NODES.split(',').map((node) => `redis://${node}`)
      : [];
  const redis = redisUrls.length > 0 ? await redisCounter(redisUrls) : null;
  const service = await startService(env);
  const keys = await createKeys(env.DATABASE_URL!, { perPath: KEYS_PER_PATH, limited: LIMITED_KEYS });
  const response = await fetch(`${service.url}/pets/1`, { headers: { 'x-api-key': keys.hot } });
  const answer: Answer = { status: response.status, headers: response.headers, body: await response.text() };
  const baseline = await startBaseline(answer.body);
  const rows: Row[] = [];
  const row = rowRunner(mode, settings, rows, redis, postgres);
  const run: ModeRun = {
    mode,
    env,
    settings,
    has,
    keys,
    service,
    answer,
    pets: get('/pets/1', keys.pets),
    rows,
    others: [],
    row,
  };
  try {
    const measured = await measurePhases(run, baseline);
    return { mode, stores, env: redacted(env), ...measured };
  } finally {
    await Promise.all([run.service.stop(), baseline.stop(), ...run.others.map((p) => p.stop())]);
    await redis?.close();
  }
}

/** The phases the run measures, in order, against `baseline` (stopped once the paths no longer need it). */
async function measurePhases(run: ModeRun, baseline: Proc): Promise<Omit<ModeResult, 'mode' | 'stores' | 'env'>> {
  const { mode, env, settings, has } = run;
  // The baseline stays up for the comparison by turns (its figures are measured first).
  const baselineFigures = await measure(baseline, get('/pets/1', run.keys.pets), settings);
  // The rows compared by a target run side by side, so that a change in the machine's load between
  // them weighs as little as it can.
  const petsByTurns: NonNullable<ModeResult['petsByTurns']> = {};
  if (has('paths')) {
    await run.row(run.service, PATHS.pets, 200, run.pets);
    petsByTurns.baseline = await petsAgainst(run, baseline, 'the baseline');
  }
  await baseline.stop();
  const defaultConfigByTurns = has('config') ? await measureDefaultConfig(run) : undefined;
  if (has('peers')) {
    Object.assign(petsByTurns, await measurePeers(run));
  }
  const refusalsByTurns = has('paths') ? await measureOtherPaths(run) : {};
  const versionsByTurns = has('paths') ? await measureVersions(run) : undefined;
  const postgres = env.DATABASE_URL!.startsWith('postgres');
  const unknownKeys = has('paths') && postgres ? await measureUnknownKeys(run) : undefined;
  const ordersByTurns = has('peers') && postgres && env.REDIS_URL ? await ordersAgainstPeer(run) : undefined;
  await run.service.stop();
  const growth = has('growth') ? await measureGrowth(mode, env, settings, run.row, run.keys.pets) : undefined;
  const events = has('events') ? await measureEvents(mode, env, settings) : {};
  return {
    baseline: baselineFigures,
    rows: run.rows,
    ...(defaultConfigByTurns ? { defaultConfigByTurns } : {}),
    ...(has('paths') ? { refusalsByTurns, petsByTurns, versionsByTurns } : {}),
    ...(growth ? { growth } : {}),
    ...(unknownKeys ? { unknownKeys } : {}),
    ...(ordersByTurns ? { ordersByTurns } : {}),
    ...events,
  };
}

/** `GET /pets/{petId}` of the service (still at `warn`) against `other` on the same requests, by turns. */
async function petsAgainst(run: ModeRun, other: Proc, name: string): Promise<ByTurns> {
  const turns = await byTurns(
    other,
    run.service,
    run.pets,
    run.settings.connections,
    CONFIG_ROUNDS,
    CONFIG_TURN_SECONDS,
  );
  process.stderr.write(
    `  ${run.mode}: ${PATHS.pets} ÷ ${name} by turns: median ${turns.median} (${turns.ratios.join(', ')})\n`,
  );
  return turns;
}

/** The default configuration's row; with the paths, against the service at `warn` by turns, which it returns. */
async function measureDefaultConfig(run: ModeRun): Promise<ByTurns | undefined> {
  // The service as started by default: an access-log line per request on stdout (see spawnProc).
  const chatty = await startService({ ...run.env, LOG_LEVEL: 'info' });
  run.others.push(chatty);
  await run.row(chatty, PATHS.defaultConfig, 200, run.pets);
  let turns: ByTurns | undefined;
  // The service at `warn` is still up when its paths are measured: the two levels by turns.
  if (run.has('paths')) {
    turns = await byTurns(run.service, chatty, run.pets, run.settings.connections, CONFIG_ROUNDS, CONFIG_TURN_SECONDS);
    process.stderr.write(
      `  ${run.mode}: default config ÷ warn by turns: median ${turns.median} (${turns.ratios.join(', ')})\n`,
    );
  }
  await chatty.stop();
  return turns;
}

/**
 * The floor, and the peers: @fastify/rate-limit's memory store and, with REDIS_URL, its Redis store, each
 * as a user would write it and sending the service's headers (bench/peer.ts); with the paths, the service
 * against the peers of its mode's store by turns (scaled out, both Redis peers), which it returns.
 */
async function measurePeers(run: ModeRun): Promise<NonNullable<ModeResult['petsByTurns']>> {
  const { answer, pets, env } = run;
  const turns: NonNullable<ModeResult['petsByTurns']> = {};
  // The floor: the service's own answer, headers and all, from bare node:http.
  await floorRow(run, PATHS.floor, answer, pets);
  const peer = async (path: string, store: Parameters<typeof startPeer>[1], headers = false, against = false) => {
    const proc = await startPeer(answer.body, store, headers ? floorHeaders(answer.headers) : undefined);
    run.others.push(proc);
    await run.row(proc, path, 200, pets, true);
    const byTurns = against && run.has('paths') ? await petsAgainst(run, proc, path) : undefined;
    await proc.stop();
    return byTurns;
  };
  await peer(PATHS.peerMemory, null);
  // By turns against the peer of the mode's own kind of store: memory embedded, Redis scaled out.
  turns.peerMemoryAnswer = await peer(PATHS.peerMemoryAnswer, null, true, !env.REDIS_URL);
  if (!env.REDIS_URL) return turns;
  const redis = () => ({ redisUrl: env.REDIS_URL!, nameSpace: `bench-peer-${randomBytes(4).toString('hex')}:` });
  turns.peerRedis = await peer(PATHS.peerRedis, redis(), false, true);
  turns.peerRedisAnswer = await peer(PATHS.peerRedisAnswer, redis(), true, true);
  return turns;
}

/**
 * The paths after `GET /pets/{petId}`: the store's, the refusals (refusals.ts) and the hot key; the refusals' turns.
 */
async function measureOtherPaths(run: ModeRun): Promise<NonNullable<ModeResult['refusalsByTurns']>> {
  const { keys } = run;
  // Before the orders are placed: 10 s after, the service approves them (tens of thousands embedded),
  // and a row measured then shares the machine with that work (the banned row read 0.32x of the baseline).
  const banned = await measureBanned(run);
  const listOrders = get('/store/orders', keys.listOrders);
  await run.row(run.service, PATHS.listOrders, 200, listOrders);
  if (run.has('peers'))
    await floorRow(run, PATHS.listOrdersFloor, await answerTo(run.service.url, listOrders), listOrders);
  const placeOrders = keys.placeOrders.map((key) => postOrder('/store/orders', key));
  await run.row(run.service, PATHS.placeOrder, 201, placeOrders);
  if (run.has('peers'))
    await floorRow(run, PATHS.placeOrderFloor, await answerTo(run.service.url, placeOrders), placeOrders);
  await run.row(run.service, PATHS.hotKey, 200, get('/pets/1', [keys.hot]));
  const overLimit = await measureOverLimit(run);
  return { banned, overLimit };
}

/** The orders peer's rows, and the service's orders against it by turns, the service's fulfilment off. */
async function ordersAgainstPeer(run: ModeRun): Promise<NonNullable<ModeResult['ordersByTurns']>> {
  const { env, keys, settings } = run;
  const nameSpace = `bench-orders-peer-${randomBytes(4).toString('hex')}:`;
  const peer = await startPeer(run.answer.body, {
    redisUrl: env.REDIS_URL!,
    nameSpace,
    databaseUrl: env.DATABASE_URL!,
  });
  run.others.push(peer);
  const service = await startService({ ...env, FULFILMENT_APPROVE_SECONDS: '0' });
  run.others.push(service);
  const listOrders = get('/store/orders', keys.listOrders);
  const placeOrders = keys.placeOrders.map((key) => postOrder('/store/orders', key));
  await run.row(peer, PATHS.peerListOrders, 200, listOrders, true);
  await run.row(peer, PATHS.peerPlaceOrder, 201, placeOrders, true);
  // The service is new: warmed as the peer was by its rows (each request once, then under load), or
  // its first round times its caches filling, its pool connecting and its code compiling (0.46-0.51
  // of the peer, against 0.7-1.0 in the rounds after).
  for (const requests of [listOrders, placeOrders]) {
    await oneAtATime(service.url, requests, requests.length);
    await sendAll(service.url, requests, 10_000, settings.connections);
  }
  const list = await byTurns(peer, service, listOrders, settings.connections, CONFIG_ROUNDS, CONFIG_TURN_SECONDS);
  const place = await byTurns(peer, service, placeOrders, settings.connections, CONFIG_ROUNDS, CONFIG_TURN_SECONDS);
  for (const [path, turns] of [
    [PATHS.listOrders, list],
    [PATHS.placeOrder, place],
  ] as const)
    process.stderr.write(
      `  ${run.mode}: ${path} ÷ the orders peer by turns: median ${turns.median} (${turns.ratios.join(', ')})\n`,
    );
  await Promise.all([peer.stop(), service.stop()]);
  return { list, place };
}

/**
 * Embedded: 100,000 orders falling due at once, a million expired events,
 * a receiver that never answers, `GET /events` with a million (events.ts).
 */
async function measureEvents(
  mode: string,
  env: Record<string, string>,
  settings: LoadSettings,
): Promise<Pick<ModeResult, 'fulfilment' | 'retention' | 'stuckReceiver' | 'eventGrowth' | 'advance' | 'testKeys'>> {
  const fulfilment = await measureFulfilment(mode, env, settings);
  const retention = await measureRetention(mode, env);
  const stuckReceiver = await measureStuckReceiver(mode, env, settings);
  const eventGrowth = await measureEventGrowth(mode, env, settings);
  const advance = await measureAdvance(mode, env);
  const testKeys = await measureTestKeys(mode, env);
  return { fulfilment, retention, stuckReceiver, eventGrowth, advance, testKeys };
}

function redacted(env: Record<string, string>): Record<string, string> {
  const shown: Record<string, string> = {};
  for (const [name, value] of Object.entries(env))
    shown[name] =
      name === 'DATABASE_URL' && !value.startsWith('postgres')
        ? '(fresh SQLite file)'
        : value.replace(/\/\/[^@/]*@/, '//');
  return shown;
}
