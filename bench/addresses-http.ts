/**
 * The HTTP part of bench/addresses.ts (needs `npm run build`): the built service on a fresh SQLite file
 * gets `GET /pets/1` without a key once from each of many client addresses, each request on a
 * connection of its own bound to its address (Linux routes all of 127/8 to lo), `IN_FLIGHT` at a time;
 * then it is left idle until its own sweep has walked them all, and its event-loop delay over that
 * sweep is read from /metrics (1 ms ticks: why, in bench/addresses.ts).
 */
import { existsSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { round } from './load.js';
import { ROOT, startService } from './service.js';
import { sqliteFile } from './setup.js';

/** Requests in flight at once. */
export const IN_FLIGHT = 200;
/** The service's sweep interval (memory-store.ts default). */
const SERVICE_SWEEP_MS = 60_000;
const MB = 1024 * 1024;

/** The i-th address: 127.1.0.1 on, skipping .0 and .255 in the last byte (65,024 per second byte). */
export function address(i: number): string {
  const perX = 256 * 254;
  return `127.${1 + Math.floor(i / perX)}.${Math.floor((i % perX) / 254)}.${1 + (i % 254)}`;
}

export interface HttpFigures {
  requests: number;
  inFlight: number;
  seconds: number;
  statuses: Record<string, number>;
  errors: number;
  rssBeforeMb: number;
  rssAfterMb: number;
  /** The service's own event-loop delay while idle, its sweep walking the callers (1 ms resolution). */
  idleSweepLoopMaxMs: number;
  idleSweepLoopP99Ms: number;
}

export async function overHttp(count: number): Promise<HttpFigures> {
  if (!existsSync(join(ROOT, 'dist/main.js')))
    throw new Error('dist/main.js is missing: npm run build first (or pass --no-http)');
  const startedAt = Date.now();
  const service = await startService({ DATABASE_URL: sqliteFile(), REDIS_URL: '', EVENT_LOOP_RESOLUTION_MS: '1' });
  try {
    const rssBefore = service.rssBytes();
    const sent = await fromEveryAddress(service.url, count);
    const rssAfter = service.rssBytes();
    const idle = await idleSweepLoopDelay(service.adminUrl, startedAt);
    return {
      requests: count,
      inFlight: IN_FLIGHT,
      seconds: round(sent.seconds, 1),
      statuses: sent.statuses,
      errors: sent.errors,
      rssBeforeMb: round(rssBefore / MB, 1),
      rssAfterMb: round(rssAfter / MB, 1),
      idleSweepLoopMaxMs: round(idle.maxMs, 1),
      idleSweepLoopP99Ms: round(idle.p99Ms, 1),
    };
  } finally {
    await service.stop();
  }
}

/**
 * `GET /pets/1` once from each of `count` addresses, `IN_FLIGHT`
 * at a time, each on a connection of its own bound to its address.
 */
async function fromEveryAddress(
  url: string,
  count: number,
): Promise<{ seconds: number; statuses: Record<string, number>; errors: number }> {
  const { hostname, port } = new URL(url);
  const statuses: Record<string, number> = {};
  let errors = 0;
  const send = (i: number) =>
    new Promise<void>((resolve) => {
      const req = request(
        {
          host: hostname,
          port,
          path: '/pets/1',
          localAddress: address(i),
          agent: false,
          headers: { connection: 'close' },
        },
        (res) => {
          statuses[res.statusCode ?? 0] = (statuses[res.statusCode ?? 0] ?? 0) + 1;
          res.resume();
          res.on('end', resolve);
          res.on('error', () => {
            errors++;
            resolve();
          });
        },
      );
      req.on('error', () => {
        errors++;
        resolve();
      });
      req.end();
    });
  const started = performance.now();
  let next = 0;
  const worker = async () => {
    while (next < count) await send(next++);
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
  return { seconds: (performance.now() - started) / 1000, statuses, errors };
}

/** The service's event-loop delay over its next sweep, from a second before it to four seconds after it began. */
async function idleSweepLoopDelay(
  adminUrl: string | undefined,
  startedAt: number,
): Promise<{ maxMs: number; p99Ms: number }> {
  // Idle until the service's next sweep has run over them all (its timer starts with the limiter,
  // within a second or two of the spawn). The delay is read over those few seconds only (a read
  // resets the histogram), so that it is the sweep's, not that of whatever else the idle minute holds.
  const nextSweep = startedAt + Math.ceil((Date.now() + 1_000 - startedAt) / SERVICE_SWEEP_MS) * SERVICE_SWEEP_MS;
  await new Promise((resolve) => setTimeout(resolve, nextSweep - 1_000 - Date.now()));
  await loopDelay(adminUrl);
  await new Promise((resolve) => setTimeout(resolve, nextSweep + 4_000 - Date.now()));
  return loopDelay(adminUrl);
}

/** The service's event-loop delay since the last read, from /metrics (prom-client's histogram, reset at each read). */
async function loopDelay(adminUrl: string | undefined): Promise<{ maxMs: number; p99Ms: number }> {
  const text = await (await fetch(`${adminUrl}/metrics`)).text();
  const value = (name: string) =>
    Number(new RegExp(`^petstore_nodejs_eventloop_lag_${name}_seconds (\\S+)$`, 'm').exec(text)?.[1]) * 1000;
  return { maxMs: value('max'), p99Ms: value('p99') };
}
