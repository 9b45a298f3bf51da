/**
 * Keys nobody created (issue 32, item 5): a flood of random well-formed keys from one address, with
 * PostgreSQL, costs no store query (src/keys/known-keys.ts), and a valid key's p99 holds meanwhile.
 * Measured: the flood's PostgreSQL queries per request in steady state (pg-count.ts, on a twin of the
 * service); `GET /pets/{petId}` over the throughput keys alone, then the same while the flood runs
 * beside it on as many connections (from a process of its own); and the bytes the filter holds
 * for a million keys.
 */
import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { KnownKeys } from '../src/keys/known-keys.js';
import { type LoadSettings, measure, type Requests } from './load.js';
import { get, type ModeRun, ROUND_TRIP_PROBES } from './mode-run.js';
import { pgQueriesPerRequest } from './pg-count.js';

export interface UnknownKeyFigures {
  /** PostgreSQL queries per request of the flood, in steady state. */
  pgPerRequest: number;
  /** The flood's own statuses and rate while it ran beside the valid keys. */
  flood: { rps: number; statuses: Record<string, number> };
  /** `GET /pets/{petId}` of valid keys: p99 in ms alone, and while the flood runs. */
  validP99: { alone: number; flooded: number };
  /** What each instance holds to know which keys exist, for a million of them. */
  filterBytesPerMillionKeys: number;
}

/** Random well-formed keys: the form of `pet_…`, made by nobody. */
function unknownKeys(n: number): string[] {
  return Array.from({ length: n }, () => `pet_${randomBytes(24).toString('base64url')}`);
}

export async function measureUnknownKeys(run: ModeRun): Promise<UnknownKeyFigures> {
  const flood: Requests = get('/pets/1', unknownKeys(2_000));
  const pgPerRequest = await pgQueriesPerRequest(run.env, flood, ROUND_TRIP_PROBES);
  // The valid keys and the flood on as many connections each, a fifth of a row's: together they load
  // the service less than a row does, so that what the flood costs others shows, not a saturated machine.
  const connections: LoadSettings = {
    ...run.settings,
    connections: Math.max(1, Math.floor(run.settings.connections / 5)),
  };
  const alone = await measure(run.service, run.pets, connections);
  const flooding = floodFrom(
    run.service.url,
    connections.connections,
    FLOOD_SETTLE_SECONDS + connections.warmupSeconds + connections.seconds + 1,
  );
  // Measured once the flood is answered and its address banned: beside the flood, not beside its
  // process starting (on two cores, that start alone doubled a valid key's p99 in runs where the
  // flood itself, read slowly, cost nothing measurable).
  await flooding.started;
  await new Promise((resolve) => setTimeout(resolve, FLOOD_SETTLE_SECONDS * 1000));
  const flooded = await measure(run.service, run.pets, connections);
  const figures = {
    pgPerRequest,
    flood: await flooding.done,
    validP99: { alone: alone.p99, flooded: flooded.p99 },
    filterBytesPerMillionKeys: await filterBytes(1_000_000),
  };
  process.stderr.write(`  ${run.mode}: unknown keys: ${JSON.stringify(figures)}\n`);
  return figures;
}

/** From the flood's first answer to the measure beside it: time for its address to be banned. */
const FLOOD_SETTLE_SECONDS = 1;

/**
 * The flood, from a process of its own (bench/unknown-keys-flood.ts):
 * `started` at its first answer, `done` with its figures.
 */
function floodFrom(
  url: string,
  connections: number,
  seconds: number,
): { started: Promise<void>; done: Promise<UnknownKeyFigures['flood']> } {
  const env = {
    ...process.env,
    FLOOD_URL: url,
    FLOOD_CONNECTIONS: String(connections),
    FLOOD_SECONDS: String(seconds),
  };
  const child = execFile(
    process.execPath,
    ['--import', 'tsx', fileURLToPath(new URL('unknown-keys-flood.ts', import.meta.url))],
    { env },
  );
  const started = new Promise<void>((resolve, reject) => {
    child.stderr!.on('data', (chunk: Buffer) => chunk.toString().includes('flooding') && resolve());
    child.on('exit', () => reject(new Error('the flood ended before its first answer')));
  });
  const done = new Promise<UnknownKeyFigures['flood']>((resolve, reject) => {
    let stdout = '';
    child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.on('exit', (code) =>
      code === 0
        ? resolve(JSON.parse(stdout) as UnknownKeyFigures['flood'])
        : reject(new Error(`the flood exited ${code}`)),
    );
  });
  // Awaited once the valid keys are measured; should a measure throw first, its failure is not a second, unhandled one.
  done.catch(() => undefined);
  return { started, done };
}

/** The filter's bytes once built over `n` keys (in this process, over their digests alone). */
async function filterBytes(n: number): Promise<number> {
  const digests = Array.from({ length: n }, (_, i) => createHash('sha256').update(String(i)).digest('hex')).sort();
  const keys = {
    count: async () => digests.length,
    hashOf: async () => undefined,
    hashesAfter: async (after: string, limit: number) => {
      let [low, high] = [0, digests.length];
      while (low < high) {
        const middle = (low + high) >>> 1;
        if (digests[middle]! <= after) low = middle + 1;
        else high = middle;
      }
      return digests.slice(low, low + limit);
    },
  };
  const known = new KnownKeys(keys, { subscribe: () => {}, trusts: () => true }, () => Date.now());
  while (known.bytes === 0) await new Promise((resolve) => setTimeout(resolve, 10));
  return known.bytes;
}
