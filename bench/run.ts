/**
 * `npm run bench`: the pure limiter core, the memory limiter's footprint and its sweep over 200,000
 * addresses (bench/addresses.ts: the longest it holds the event loop, in process and over HTTP), one key
 * admitting a million requests a minute (bench/hot-key.ts: what its window holds in process and, with
 * REDIS_URL, in Redis), then the HTTP benchmark
 * of the built service against a bare node:http baseline, in each mode the environment allows:
 *
 *   embedded     a fresh SQLite file, limits in memory (always)
 *   scaled-out   a fresh schema on DATABASE_URL (postgres://…) and REDIS_URL (when both are set)
 *   scaled-out-cluster  the same on a Redis Cluster of three primaries and three replicas that the
 *                bench starts (scripts/redis-cluster.ts; when DATABASE_URL is PostgreSQL and
 *                redis-server and redis-cli are installed): the paths phase, next to the single Redis
 *
 * The HTTP benchmark of a mode has these phases (bench/http.ts), each measured against the baseline
 * of the same mode's run:
 *
 *   paths    the service's paths, at LOG_LEVEL=warn; scaled-out, Redis round trips and PostgreSQL
 *            queries per request (bench/redis-count.ts, bench/pg-count.ts)
 *   config   GET /pets/{petId} on a service at its default LOG_LEVEL=info
 *   peers    plain Fastify 5 with @fastify/rate-limit (bench/peer.ts): its memory store, and
 *            scaled-out its Redis store, each also sending the service's headers (by turns against the service)
 *   growth   embedded only: a store of 1,000,000 keys, one with 1,000,000 orders (bench/growth.ts):
 *            deep order pages, GET /pets/{petId} over 100,000 of the keys, RSS per key seen
 *   events   embedded only: 100,000 orders falling due at once on a service under load, 1,000,000 expired
 *            events deleted, 10,000 webhook deliveries to a receiver that never answers, GET /events
 *            of a key with 1,000,000 events against a small store's (bench/events.ts), and a test key
 *            with 10,000 pending orders advanced a year beside other keys' load (bench/advance.ts), and a
 *            test key's request against a live key's, by turns (bench/test-keys.ts)
 *
 * BENCH_ONLY=phase,… runs only those (limiter, memory, addresses, hot-key, paths, config, peers, growth, events;
 * default all), e.g. BENCH_ONLY=peers,growth while working on them. BENCH_DURATION (seconds per path, default 10)
 * shortens a run; BENCH_CONNECTIONS (default 50, the concurrency issue 10's figures and targets were set at);
 * BENCH_PROFILE=dir writes the service's CPU profiles there; BENCH_SKIP_BUILD=1 runs the dist/ already built. Results:
 * bench/results/ (not tracked), or BENCH_RESULTS=dir; a run with BENCH_ONLY writes none unless BENCH_RESULTS is set (a
 * part of a run must not replace a whole one).
 * Each mode is compared with its reference run, the one result the repository keeps (bench/compare.ts);
 * BENCH_SAVE_REFERENCE=1 makes a whole run the new reference.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { postgresSchema } from '../test/helpers/database.js';
import { type AddressFigures, addressesTable } from './addresses.js';
import { chart } from './chart.js';
import { againstReference, keepAsReference } from './compare.js';
import { advanceLine } from './advance.js';
import { testKeyLine } from './test-keys.js';
import { eventGrowthLine, fulfilmentLine, retentionLine, stuckReceiverLine } from './events.js';
import { growthLine } from './growth.js';
import { type HotKeyFigures, hotKeyTable } from './hot-key.js';
import { benchMode, type ModeResult } from './http.js';
import type { LoadSettings } from './load.js';
import { type MemoryFigures, memoryTable } from './memory.js';
import { HTTP_PHASES, type HttpPhase } from './mode-run.js';
import { ROOT } from './service.js';
import { sqliteFile } from './setup.js';
import { targets } from './targets.js';
import { startRedisCluster } from '../scripts/redis-cluster.js';

/** The bench's Redis Cluster: ports 7100-7105 (and their cluster bus, 17100-17105). */
const CLUSTER_PORT = 7100;
const clusterTools = () =>
  ['redis-server', 'redis-cli'].every((tool) => spawnSync(tool, ['--version']).error === undefined);

const seconds = Number(process.env.BENCH_DURATION || 10);
const settings: LoadSettings = {
  connections: Number(process.env.BENCH_CONNECTIONS || 50),
  seconds,
  warmupSeconds: Math.min(1, seconds),
};
const PHASES = ['limiter', 'memory', 'addresses', 'hot-key', ...HTTP_PHASES] as const;
const only = process.env.BENCH_ONLY?.split(',')
  .map((p) => p.trim())
  .filter(Boolean);
for (const phase of only ?? []) {
  if (!(PHASES as readonly string[]).includes(phase))
    throw new Error(`BENCH_ONLY: unknown phase ${phase} (phases: ${PHASES.join(', ')})`);
}
const phases = new Set(only ?? PHASES);
const httpPhases = new Set(HTTP_PHASES.filter((p) => phases.has(p))) as ReadonlySet<HttpPhase>;
const RESULTS = process.env.BENCH_RESULTS || (only ? null : join(ROOT, 'bench/results'));

function node(args: string[], capture = false): string {
  const run = spawnSync(process.execPath, args, {
    cwd: ROOT,
    stdio: ['ignore', capture ? 'pipe' : 'inherit', 'inherit'],
    encoding: 'utf8',
  });
  if (run.status !== 0) throw new Error(`node ${args.join(' ')} failed (${run.status})`);
  return run.stdout ?? '';
}

// The numbers are the production build's: what `npm start` runs.
if (process.env.BENCH_SKIP_BUILD !== '1')
  node([join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json']);

if (phases.has('limiter')) node(['--expose-gc', '--import', 'tsx', 'bench/limiter.ts']);
let memory: MemoryFigures | null = null;
if (phases.has('memory')) {
  memory = JSON.parse(node(['--expose-gc', '--import', 'tsx', 'bench/memory.ts', '--json'], true)) as MemoryFigures;
  console.log('\nMemory limiter: active callers, and what the idle sweep gives back');
  console.table(memoryTable(memory));
}
// 200,000 addresses: the sweep's loop delay in process, then
// over HTTP (about 2 min; BENCH_ADDRESSES_HTTP=0 leaves it out).
let addresses: AddressFigures | null = null;
if (phases.has('addresses')) {
  addresses = JSON.parse(
    node(['--expose-gc', '--import', 'tsx', 'bench/addresses.ts', '--json'], true),
  ) as AddressFigures;
  console.log(
    '\nMemory limiter, 200,000 addresses (bench/addresses.ts; target: loop delay max ≤ 20 ms during a sweep)',
  );
  console.table(addressesTable(addresses));
}

let hotKey: HotKeyFigures | null = null;
if (phases.has('hot-key')) {
  hotKey = JSON.parse(node(['--expose-gc', '--import', 'tsx', 'bench/hot-key.ts', '--json'], true)) as HotKeyFigures;
  console.log('\nOne key admitting a million requests a minute: what its minute window holds (bench/hot-key.ts)');
  console.table(hotKeyTable(hotKey));
}

// Others' processes on the machine skew req/s: the load average goes into the results.
const loadBefore = loadavg();
const modes: ModeResult[] = [];
if (httpPhases.size > 0) {
  console.error(
    `\nHTTP (${[...httpPhases].join(', ')}): ${settings.connections} connections, ${settings.warmupSeconds} s warm-up + ${settings.seconds} s per path`,
  );
  const embedded = await benchMode(
    'embedded',
    'SQLite file, limits in memory',
    { DATABASE_URL: sqliteFile(), REDIS_URL: '' },
    settings,
    httpPhases,
  );
  if (embedded) modes.push(embedded);
  const { DATABASE_URL, REDIS_URL } = process.env;
  if (DATABASE_URL?.startsWith('postgres') && REDIS_URL) {
    const schema = await postgresSchema(DATABASE_URL, 'bench');
    try {
      const prefix = `bench-${randomBytes(4).toString('hex')}:`;
      const scaledOut = await benchMode(
        'scaled-out',
        'PostgreSQL, limits in Redis',
        { DATABASE_URL: schema.url, REDIS_URL, REDIS_KEY_PREFIX: prefix },
        settings,
        httpPhases,
      );
      if (scaledOut) modes.push(scaledOut);
    } finally {
      await schema.drop();
    }
  } else {
    console.error('scaled-out mode skipped: set DATABASE_URL=postgres://… and REDIS_URL=redis://…');
  }
  const clusterPhases = new Set([...httpPhases].filter((p) => p === 'paths')) as ReadonlySet<HttpPhase>;
  if (DATABASE_URL?.startsWith('postgres') && clusterPhases.size > 0 && clusterTools()) {
    const [schema, cluster] = await Promise.all([
      postgresSchema(DATABASE_URL, 'bench'),
      startRedisCluster(CLUSTER_PORT),
    ]);
    try {
      const scaledOut = await benchMode(
        'scaled-out-cluster',
        'PostgreSQL, limits in a Redis Cluster (3 primaries, 3 replicas)',
        { DATABASE_URL: schema.url, REDIS_URL: '', REDIS_CLUSTER_NODES: cluster.nodesVariable },
        settings,
        clusterPhases,
      );
      if (scaledOut) modes.push(scaledOut);
    } finally {
      await Promise.all([schema.drop(), cluster.stop()]);
    }
  } else if (clusterPhases.size > 0) {
    console.error(
      'scaled-out-cluster mode skipped: set DATABASE_URL=postgres://… and install redis-server and redis-cli',
    );
  }
}

for (const mode of modes) {
  const b = mode.baseline;
  console.log(
    `\n${mode.mode} (${mode.stores}): node:http baseline ${b.rps.toLocaleString('en')} req/s, p50 ${b.p50} ms, p99 ${b.p99} ms, ${b.cpuUsPerRequest} CPU µs/req`,
  );
  console.table(
    mode.rows.map((r) => ({
      path: r.path,
      'req/s': r.rps.toLocaleString('en'),
      'last 1 s': r.rpsLastSecond.toLocaleString('en'),
      'p50 ms': r.p50,
      'p99 ms': r.p99,
      'CPU µs/req': r.cpuUsPerRequest,
      '× baseline': (r.rps / mode.baseline.rps).toFixed(2),
      ...(r.redisPerRequest === undefined ? {} : { 'Redis scripts/req': r.redisPerRequest.toFixed(3) }),
      ...(r.redisUsPerScript === undefined ? {} : { 'Redis µs/script': r.redisUsPerScript.toFixed(1) }),
      ...(r.pgPerRequest === undefined ? {} : { 'PostgreSQL queries/req': r.pgPerRequest.toFixed(3) }),
      statuses: r.allExpected ? `all ${r.expected}` : JSON.stringify(r.statuses),
      'errors/timeouts/resets': `${r.errors}/${r.timeouts}/${r.resets}`,
    })),
  );
  if (mode.growth) console.log(growthLine(mode.growth));
  if (mode.fulfilment) console.log(fulfilmentLine(mode.fulfilment));
  if (mode.retention) console.log(retentionLine(mode.retention));
  if (mode.stuckReceiver) console.log(stuckReceiverLine(mode.stuckReceiver));
  if (mode.advance) console.log(advanceLine(mode.advance));
  for (const { path, turns, dearer } of mode.testKeys?.paths ?? []) console.log(testKeyLine(path, turns, dearer));
  if (mode.eventGrowth) console.log(eventGrowthLine(mode.eventGrowth));
  const compared = againstReference(mode);
  if (compared) {
    console.log(`Against the reference run of ${compared.date} (bench/reference/${mode.mode}.json):`);
    console.table(compared.rows);
  }
}
const verdicts = targets(modes);
if (verdicts.length > 0) {
  console.log('\nTargets');
  console.table(verdicts);
}

const date = new Date().toISOString().slice(0, 10);
const machine = {
  node: process.version,
  cpus: cpus().length,
  cpu: cpus()[0]?.model ?? 'unknown',
  loadAverage: { before: loadBefore, after: loadavg() },
};
if (RESULTS) {
  mkdirSync(RESULTS, { recursive: true });
  for (const mode of modes) {
    const targetsOfMode = verdicts.filter((t) => t.mode === mode.mode);
    const content = `${JSON.stringify({ date, machine, settings, phases: [...phases], ...mode, targets: targetsOfMode }, null, 2)}\n`;
    writeFileSync(join(RESULTS, `${date}-${mode.mode}.json`), content);
    if (process.env.BENCH_SAVE_REFERENCE && !only) keepAsReference(mode.mode, content);
  }
  if (memory || addresses || hotKey)
    writeFileSync(
      join(RESULTS, `${date}-memory.json`),
      `${JSON.stringify({ date, machine, ...memory, addresses, hotKey }, null, 2)}\n`,
    );
  if (modes.length > 0)
    writeFileSync(
      join(RESULTS, 'latest.svg'),
      chart(
        modes,
        `Petstore ${date}: req/s at ${settings.connections} connections (${machine.cpus} cores, Node ${process.version})`,
      ),
    );
  console.log(`\nWrote ${RESULTS}/${date}-*.json${modes.length > 0 ? ` and ${RESULTS}/latest.svg` : ''}`);
} else {
  console.log('\nBENCH_ONLY: no results written (set BENCH_RESULTS=dir to keep them)');
}
