/**
 * 200,000 distinct client addresses (127.x.y.z), each counted under the anonymous policy: how long
 * the memory limiter's sweep holds the event loop (target: 20 ms at most), and whether the memory
 * comes back once they are idle and forgotten.
 *
 *   node --expose-gc --import tsx bench/addresses.ts [--json] [--no-http]
 *
 * (BENCH_ADDRESSES_HTTP=0 is --no-http from `npm run bench`: the HTTP part takes about two minutes.)
 *
 * In process: a MemoryLimiterStore on an injected clock (the service's sweep interval and clock are
 * not configurable, and its callers stay until the next UTC midnight, when their day count resets).
 * The clock moves past the minute and the day, then `startSweep()` (what the store's timer calls)
 * forgets them a slice at a time; the loop's delay is measured with `monitorEventLoopDelay({
 * resolution: 1 })`, and for comparison the same over a second fill swept all at once (`sweep()`).
 *
 * Over HTTP (unless --no-http; needs `npm run build`): the built service on a fresh SQLite file gets
 * `GET /pets/1` without a key (a 401, counted per address) once from each of the 200,000 addresses,
 * each request on a connection of its own bound to its address (Linux routes all of 127/8 to lo),
 * 200 at a time. Then it is left idle until its own 60 s sweep has walked them all (it keeps them:
 * they count until midnight UTC), and its event-loop delay from a second before that sweep to four
 * seconds after it began is read from
 * /metrics (prom-client's `monitorEventLoopDelay`, reset at each read). That histogram records the
 * interval between two ticks of its timer, not the delay beyond it: a block of B ms reads between B
 * and B + the tick, so the service runs with 1 ms ticks here (EVENT_LOOP_RESOLUTION_MS=1; 10 by default).
 * The HTTP part is bench/addresses-http.ts.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { MemoryLimiterStore, SWEEP_SLICE } from '../src/ratelimit/memory-store.js';
import { ANONYMOUS_POLICY } from '../src/ratelimit/plans.js';
import { DAY_MS, dayOf } from '../src/ratelimit/state.js';
import { address, type HttpFigures, IN_FLIGHT, overHttp } from './addresses-http.js';

const ADDRESSES = 200_000;
const MB = 1024 * 1024;

export interface LoopDelay {
  maxMs: number;
  p99Ms: number;
  meanMs: number;
}

export interface SweepFigures extends LoopDelay {
  /** From the start of the sweep to the last caller looked at. */
  tookMs: number;
  /** The longest stretch between two of the bench's own turns of the loop while it ran. */
  longestTurnMs: number;
  callersLeft: number;
}

export interface AddressFigures {
  addresses: number;
  slice: number;
  memory: {
    before: { heapMb: number; rssMb: number };
    withCallers: { heapMb: number; rssMb: number };
    afterSweep: { heapMb: number; rssMb: number };
  };
  /**
   * What the store's timer runs, a slice at a time: over callers that still count today (kept), first
   * just after their minute and then a minute later, and over the same callers once idle (forgotten).
   */
  sliced: { keptFirst: SweepFigures; keptLater: SweepFigures; idle: SweepFigures };
  /** `sweep()`, all in one go, over the same number of idle callers: for comparison. */
  allAtOnce: SweepFigures;
  http: HttpFigures | null;
}

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));
const round = (n: number, digits = 1) => Math.round(n * 10 ** digits) / 10 ** digits;

function reading(): { heapMb: number; rssMb: number } {
  const gc = globalThis.gc;
  if (!gc) throw new Error('run with node --expose-gc');
  gc();
  gc();
  const { heapUsed, rss } = process.memoryUsage();
  return { heapMb: round(heapUsed / MB), rssMb: round(rss / MB) };
}

/** One `hit` per address, under the anonymous policy, at `clock.now`. */
async function fill(store: MemoryLimiterStore): Promise<void> {
  for (let i = 0; i < ADDRESSES; i++) await store.hit(`ip:${address(i)}`, ANONYMOUS_POLICY);
  if (store.size !== ADDRESSES)
    throw new Error(`${store.size} callers held, not ${ADDRESSES}: did a sweep run while filling?`);
}

/** Runs `sweep` with the event loop's delay measured, turning the loop itself, until `done()`. */
async function measure(sweep: () => void, done: () => boolean, store: MemoryLimiterStore): Promise<SweepFigures> {
  const delay = monitorEventLoopDelay({ resolution: 1 });
  delay.enable();
  // Let the histogram settle on an idle loop first.
  await new Promise((resolve) => setTimeout(resolve, 50));
  delay.reset();
  // A reset forgets the histogram's last tick, so the first delay after it would not be recorded.
  await new Promise((resolve) => setTimeout(resolve, 5));
  const started = performance.now();
  let last = started;
  let longestTurn = 0;
  sweep();
  do {
    await turn();
    const now = performance.now();
    longestTurn = Math.max(longestTurn, now - last);
    last = now;
  } while (!done());
  const tookMs = performance.now() - started;
  await new Promise((resolve) => setTimeout(resolve, 20));
  delay.disable();
  return {
    maxMs: round(delay.max / 1e6),
    p99Ms: round(delay.percentile(99) / 1e6),
    meanMs: round(delay.mean / 1e6, 2),
    tookMs: Math.round(tookMs),
    longestTurnMs: round(longestTurn),
    callersLeft: store.size,
  };
}

async function inProcess(): Promise<Omit<AddressFigures, 'http'>> {
  const clock = { now: Date.parse('2024-03-01T12:00:00.000Z') };
  const before = reading();
  // The store's own timer is left out of the way: the bench calls what it calls, when the loop is idle.
  const store = new MemoryLimiterStore({ clock: () => clock.now, sweepIntervalMs: 3_600_000 });
  await fill(store);
  const withCallers = reading();
  const sliced = () =>
    measure(
      () => store.startSweep(),
      () => !store.sweeping,
      store,
    );
  // Still counting today: kept. The first sweep after their minute lets go of their minute logs.
  clock.now += 61_000;
  const keptFirst = await sliced();
  clock.now += 61_000;
  const keptLater = await sliced();
  // Past the minute and the day: idle, forgotten.
  clock.now = (dayOf(clock.now) + 1) * DAY_MS + 61_000;
  const idle = await sliced();
  const afterSweep = reading();
  await store.close();

  const whole = new MemoryLimiterStore({ clock: () => clock.now, sweepIntervalMs: 3_600_000 });
  await fill(whole);
  clock.now = (dayOf(clock.now) + 1) * DAY_MS + 61_000;
  reading();
  let swept = false;
  const allAtOnce = await measure(
    () => {
      swept = true;
      whole.sweep();
    },
    () => swept,
    whole,
  );
  await whole.close();
  return {
    addresses: ADDRESSES,
    slice: SWEEP_SLICE,
    memory: { before, withCallers, afterSweep },
    sliced: { keptFirst, keptLater, idle },
    allAtOnce,
  };
}

export function addressesTable(f: AddressFigures): Record<string, string | number>[] {
  const row = (name: string, s: SweepFigures) => ({
    '': name,
    'loop delay max ms': s.maxMs,
    'p99 ms': s.p99Ms,
    'longest turn ms': s.longestTurnMs,
    'sweep took ms': s.tookMs,
    'callers left': s.callersLeft,
    'heap MB': '',
    'RSS MB': '',
  });
  const mem = (name: string, m: { heapMb: number; rssMb: number }) => ({
    '': name,
    'heap MB': m.heapMb,
    'RSS MB': m.rssMb,
  });
  const slice = `${f.slice.toLocaleString('en')} a turn`;
  const rows: Record<string, string | number>[] = [
    row(`sweep (${slice}), all kept, just after their minute`, f.sliced.keptFirst),
    row(`sweep (${slice}), all kept, a minute later`, f.sliced.keptLater),
    row(`sweep (${slice}), all idle: forgotten`, f.sliced.idle),
    row('sweep all at once, all idle (for comparison)', f.allAtOnce),
    mem('before the callers', f.memory.before),
    mem(`${f.addresses.toLocaleString('en')} callers held`, f.memory.withCallers),
    mem('after the sweep that forgot them, and a GC', f.memory.afterSweep),
  ];
  if (f.http) {
    const h = f.http;
    const statuses = Object.entries(h.statuses)
      .map(([s, n]) => `${n} × ${s}`)
      .join(', ');
    rows.push(
      {
        '': `HTTP: ${h.requests.toLocaleString('en')} addresses, ${h.inFlight} in flight: ${h.seconds} s (${Math.round(h.requests / h.seconds)} req/s), ${statuses}, ${h.errors} errors`,
        'RSS MB': `${h.rssBeforeMb} → ${h.rssAfterMb}`,
      },
      {
        '': 'HTTP: the service idle while its own sweep walks them (kept until midnight UTC; 1 ms ticks, from 1 s before the sweep to 4 s after its start)',
        'loop delay max ms': h.idleSweepLoopMaxMs,
        'p99 ms': h.idleSweepLoopP99Ms,
      },
    );
  }
  return rows;
}

if (process.argv[1] === new URL(import.meta.url).pathname) {
  const figures: AddressFigures = { ...(await inProcess()), http: null };
  if (!process.argv.includes('--no-http') && process.env.BENCH_ADDRESSES_HTTP !== '0') {
    process.stderr.write(
      `HTTP: ${ADDRESSES.toLocaleString('en')} addresses, ${IN_FLIGHT} in flight, then the service's own sweep (up to a minute)…\n`,
    );
    figures.http = await overHttp(ADDRESSES);
  }
  if (process.argv.includes('--json')) console.log(JSON.stringify(figures));
  else console.table(addressesTable(figures));
}
