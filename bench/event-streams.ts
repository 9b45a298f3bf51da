/**
 * `npm run bench:streams`: what open event streams (`GET /events/stream`, docs/orders-and-events.md#the-event-stream)
 * cost the instance that holds them, against the targets for 2,000 streams on one instance: at most 30 KB
 * of memory each, an event on its stream within 250 ms of its commit (p99), and live keys' ordinary requests keeping
 * at least 95 % of their throughput. On each store:
 *
 *   memory      the service's RSS and heap used (its /metrics), each reading after a full collection (the service
 *               exposes none: it is started with --expose-gc and bench/collect-on-signal.mjs, which collects on
 *               SIGUSR2), the median of MEMORY_SAMPLES readings 2 s apart, before and after STREAMS streams open,
 *               STREAMS_PER_KEY on each live key
 *   arrival     while they are open, ORDERS_PER_SECOND orders a second for WRITE_SECONDS s (`POST /store/orders`,
 *               spread over the keys, paced from this process), and for every event frame every stream receives
 *               its arrival less its `timestamp` (its commit): p50, p99, max
 *   throughput  `GET /pets/{petId}` of the same keys, 50 connections, by turns without and with the streams open
 *               (closed and opened again before each turn, untimed: bench/load.ts `byTurns`; then a collection, so
 *               that their garbage falls in neither turn), ROUNDS rounds of TURN_SECONDS s: req/s medians
 *               (min–max), their ratio, the service's CPU µs per request
 *
 *   embedded    a fresh SQLite file, limits in memory: one instance
 *   scaled-out  a fresh schema on DATABASE_URL (postgres://…) with REDIS_URL (when both are set): two instances, the
 *               streams on A, the orders through B; A's memory and throughput
 *
 * The streams' clients run in a process of their own (bench/stream-reader.ts), never in this one, which runs
 * autocannon. The fulfilment is off (FULFILMENT_APPROVE_SECONDS=0): an order's one event is `order.placed`, and no
 * approval falls into the throughput turns. Knobs: STREAMS (2000), STREAMS_PER_KEY (5), ROUNDS (6), TURN_SECONDS
 * (5), ORDERS_PER_SECOND (50), WRITE_SECONDS (20), MEMORY_SAMPLES (5), STORES (`embedded,scaled-out`).
 */
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { postgresSchema } from '../test/helpers/database.js';
import { type StreamFigures, streamsTable } from './event-streams-table.js';
import { byTurns, oneAtATime, sendAll } from './load.js';
import { get } from './mode-run.js';
import { type Proc, startService } from './service.js';
import { collect, COLLECTED_ON_SIGNAL, memoryOf } from './service-memory.js';
import { enterpriseKeys, sqliteFile } from './setup.js';
import { Readers, writeOrders } from './stream-clients.js';

const knob = (name: string, fallback: number) => Number(process.env[name] || fallback);
const STREAMS = knob('STREAMS', 2000);
const PER_KEY = knob('STREAMS_PER_KEY', 5);
const ROUNDS = knob('ROUNDS', 6);
const TURN_SECONDS = knob('TURN_SECONDS', 5);
const ORDERS_PER_SECOND = knob('ORDERS_PER_SECOND', 50);
const WRITE_SECONDS = knob('WRITE_SECONDS', 20);
const MEMORY_SAMPLES = knob('MEMORY_SAMPLES', 5);
const STORES = new Set((process.env.STORES || 'embedded,scaled-out').split(',').map((s) => s.trim()));
const CONNECTIONS = 50;
/** After the streams open (or close), before anything is measured: the openings' garbage, the closes seen. */
const SETTLE_MS = 2000;
/** After the last order: its events' way to the streams (a poll every 100 ms), with room to spare. */
const LAST_EVENTS_MS = 2000;
const MEMORY_SAMPLE_GAP_MS = 2000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
}

interface Scene {
  mode: string;
  /** Holds the streams and answers the throughput turns. */
  a: Proc;
  /** Takes the orders: `a` itself on the embedded store. */
  b: Proc;
  keys: string[];
  readers: Readers;
}

/** The service's memory before and after the streams open: they are open when it returns. */
async function memoryPhase({ mode, a, keys, readers }: Scene) {
  const pets = get('/pets/1', keys);
  // Every key seen once, then the path warm, before the first reading.
  await oneAtATime(a.url, pets, pets.length);
  await sendAll(a.url, pets, 20_000, CONNECTIONS);
  process.stderr.write(`  ${mode}: ${keys.length} keys; memory before the streams…\n`);
  const before = await memoryOf(a, MEMORY_SAMPLES, MEMORY_SAMPLE_GAP_MS);
  const { opened, failed } = await readers.open(a.url, keys, PER_KEY);
  process.stderr.write(`  ${mode}: ${opened} of ${keys.length * PER_KEY} streams open ${JSON.stringify(failed)}\n`);
  await sleep(SETTLE_MS);
  const after = await memoryOf(a, MEMORY_SAMPLES, MEMORY_SAMPLE_GAP_MS);
  const streams = keys.length * PER_KEY;
  const memory = {
    before,
    after,
    rssPerStream: Math.round((after.rss - before.rss) / streams),
    heapPerStream: Math.round((after.heap - before.heap) / streams),
  };
  return { opened, failed, memory };
}

/** Orders through `b` while the streams are open on `a`: each event's arrival on each stream, less its commit. */
async function arrivalPhase({ mode, a, b, keys, readers }: Scene) {
  process.stderr.write(
    `  ${mode}: ${ORDERS_PER_SECOND} orders a second for ${WRITE_SECONDS} s${a === b ? '' : ' through B'}…\n`,
  );
  const { ended } = await readers.take();
  const written = await writeOrders(b.url, keys, ORDERS_PER_SECOND, WRITE_SECONDS);
  await sleep(LAST_EVENTS_MS);
  const report = await readers.take();
  const sorted = report.latencies.sort((x, y) => x - y);
  const arrival = {
    ...written,
    frames: report.frames,
    // Each order's one event (the fulfilment is off) on each of its key's streams.
    expected: (written.statuses['201'] ?? 0) * PER_KEY,
    p50: quantile(sorted, 0.5),
    p99: quantile(sorted, 0.99),
    max: sorted.at(-1) ?? NaN,
  };
  return { arrival, ended: ended + report.ended };
}

/** `GET /pets/{petId}` of the keys on `a` by turns: the streams closed for each first turn, open for each second. */
async function throughputPhase({ mode, a, keys, readers }: Scene, opened: number) {
  process.stderr.write(`  ${mode}: GET /pets/{petId} without and with the streams, ${ROUNDS} rounds by turns…\n`);
  let isOpen = true;
  let fewestOpen = opened;
  let ended = 0;
  const turns = await byTurns(a, a, get('/pets/1', keys), CONNECTIONS, ROUNDS, TURN_SECONDS, async (side) => {
    if (side === 'a' && isOpen) {
      ended += (await readers.take()).ended;
      await readers.close();
    } else if (side === 'b' && !isOpen) {
      fewestOpen = Math.min(fewestOpen, (await readers.open(a.url, keys, PER_KEY)).opened);
    } else return;
    isOpen = !isOpen;
    await sleep(SETTLE_MS);
    // What the streams left when they closed (or opened) is collected now, not in the next turn.
    await collect(a);
  });
  ended += (await readers.take()).ended;
  return { turns, fewestOpen, ended };
}

/** One store's figures; the keys are written into `env.DATABASE_URL` once the first instance has migrated it. */
async function measureStreams(
  mode: string,
  stores: string,
  env: Record<string, string>,
  twoInstances: boolean,
): Promise<StreamFigures> {
  const serviceEnv = {
    ...env,
    STREAMS_PER_KEY: String(PER_KEY),
    FULFILMENT_APPROVE_SECONDS: '0',
    NODE_OPTIONS: COLLECTED_ON_SIGNAL,
  };
  const started: Proc[] = [];
  const readers = new Readers();
  try {
    started.push(await startService(serviceEnv));
    if (twoInstances) started.push(await startService(serviceEnv));
    const keys = await enterpriseKeys(env.DATABASE_URL!, Math.ceil(STREAMS / PER_KEY));
    const scene: Scene = { mode, a: started[0]!, b: started.at(-1)!, keys, readers };
    const { opened, failed, memory } = await memoryPhase(scene);
    const { arrival, ended } = await arrivalPhase(scene);
    const throughput = await throughputPhase(scene, opened);
    const streams = keys.length * PER_KEY;
    return {
      mode,
      stores,
      keys: keys.length,
      streams,
      opened,
      failed,
      memory,
      arrival,
      ...throughput,
      ended: ended + throughput.ended,
    };
  } finally {
    readers.stop();
    await Promise.all(started.map((service) => service.stop()));
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.error(
    `event streams: ${STREAMS} streams (${PER_KEY} a key), ${ORDERS_PER_SECOND} orders/s for ${WRITE_SECONDS} s, ` +
      `${ROUNDS} rounds of ${TURN_SECONDS} s by turns, ${CONNECTIONS} connections`,
  );
  const results: StreamFigures[] = [];
  if (STORES.has('embedded')) {
    const file = sqliteFile();
    try {
      results.push(
        await measureStreams('embedded', 'SQLite file, limits in memory', { DATABASE_URL: file, REDIS_URL: '' }, false),
      );
    } finally {
      rmSync(dirname(file), { recursive: true, force: true });
    }
  }
  const { DATABASE_URL, REDIS_URL } = process.env;
  if (STORES.has('scaled-out')) {
    if (DATABASE_URL?.startsWith('postgres') && REDIS_URL) {
      const schema = await postgresSchema(DATABASE_URL, 'bench');
      try {
        const env = {
          DATABASE_URL: schema.url,
          REDIS_URL,
          REDIS_KEY_PREFIX: `bench-streams-${randomBytes(4).toString('hex')}:`,
        };
        results.push(
          await measureStreams('scaled-out', 'PostgreSQL and Redis: streams on A, orders through B', env, true),
        );
      } finally {
        await schema.drop();
      }
    } else console.error('scaled-out skipped: set DATABASE_URL=postgres://… and REDIS_URL=redis://…');
  }
  for (const figures of results) {
    console.log(`\n${figures.mode} (${figures.stores})`);
    console.table(streamsTable(figures));
  }
}
