/**
 * Memory of the in-process limiter: 100,000 distinct callers active at once, then the same store
 * after they have all gone idle, swept and collected. Run alone, in a fresh process, so that RSS
 * means something: `node --expose-gc --import tsx bench/memory.ts [--json]`.
 *
 * A caller is forgotten once its state behaves like no state at all (state.ts `isFresh`): for a
 * caller that was admitted today that is the next UTC midnight, when its day count resets, so the
 * clock moves past midnight (and past the minute) before the sweep.
 */
import { MemoryLimiterStore } from '../src/ratelimit/memory-store.js';
import { policyFor } from '../src/ratelimit/plans.js';
import { DAY_MS, dayOf } from '../src/ratelimit/state.js';

const CALLERS = 100_000;
const REQUESTS_PER_CALLER = 5;

export interface MemoryFigures {
  callers: number;
  requestsPerCaller: number;
  /** Growth with every caller active, in bytes per caller. */
  rssPerCaller: number;
  heapPerCaller: number;
  /** Held after the idle sweep and a collection, in bytes per (former) caller; about 0 is right. */
  heapHeldAfterSweep: number;
  rssHeldAfterSweep: number;
  /** RSS of a second 100,000 callers after the sweep, above the first peak: about 0 when freed memory is reused. */
  rssAboveFirstPeakOnRefill: number;
  callersLeft: number;
  sweepMs: number;
}

const MB = 1024 * 1024;

async function figures(): Promise<MemoryFigures> {
  const gc = globalThis.gc;
  if (!gc) throw new Error('run with node --expose-gc');
  let now = Date.parse('2024-03-01T12:00:00.000Z');
  const store = new MemoryLimiterStore({ clock: () => now, sweepIntervalMs: 3_600_000 });
  const pro = policyFor('pro');
  const reading = () => {
    gc();
    gc();
    return process.memoryUsage();
  };
  const fill = async (generation: number) => {
    for (let i = 0; i < CALLERS; i++) {
      // The shape of a real caller id (`key:` + a key id), since the store holds it too.
      const caller = `key:key_${generation}${i.toString(16).padStart(15, '0')}`;
      for (let r = 0; r < REQUESTS_PER_CALLER; r++) await store.hit(caller, pro);
      if (i % 1000 === 0) now += 1;
    }
  };
  const before = reading();
  await fill(0);
  const active = reading();
  now = (dayOf(now) + 1) * DAY_MS + 61_000;
  const started = performance.now();
  store.sweep();
  const sweepMs = performance.now() - started;
  const idle = reading();
  const callersLeft = store.size;
  // V8 keeps freed heap pages committed for reuse rather than returning all of them to the OS.
  await fill(1);
  const refilled = reading();
  await store.close();
  return {
    callers: CALLERS,
    requestsPerCaller: REQUESTS_PER_CALLER,
    rssPerCaller: Math.round((active.rss - before.rss) / CALLERS),
    heapPerCaller: Math.round((active.heapUsed - before.heapUsed) / CALLERS),
    heapHeldAfterSweep: Math.round((idle.heapUsed - before.heapUsed) / CALLERS),
    rssHeldAfterSweep: Math.round((idle.rss - before.rss) / CALLERS),
    rssAboveFirstPeakOnRefill: Math.round((refilled.rss - active.rss) / CALLERS),
    callersLeft,
    sweepMs: Math.round(sweepMs),
  };
}

export function memoryTable(m: MemoryFigures): Record<string, string>[] {
  const mb = (perCaller: number) => `${((perCaller * m.callers) / MB).toFixed(1)} MB`;
  return [
    {
      '': `${m.callers.toLocaleString('en')} active callers (${m.requestsPerCaller} requests each)`,
      'heap/caller': `${m.heapPerCaller} B`,
      'RSS/caller': `${m.rssPerCaller} B`,
      'heap total': mb(m.heapPerCaller),
      'RSS total': mb(m.rssPerCaller),
    },
    {
      '': `after the idle sweep (${m.sweepMs} ms, ${m.callersLeft} left) and a GC`,
      'heap/caller': `${m.heapHeldAfterSweep} B`,
      'RSS/caller': `${m.rssHeldAfterSweep} B`,
      'heap total': mb(m.heapHeldAfterSweep),
      'RSS total': mb(m.rssHeldAfterSweep),
    },
    {
      '': `${m.callers.toLocaleString('en')} new callers after the sweep: RSS above the first peak`,
      'heap/caller': '',
      'RSS/caller': `${m.rssAboveFirstPeakOnRefill} B`,
      'heap total': '',
      'RSS total': mb(m.rssAboveFirstPeakOnRefill),
    },
  ];
}

if (process.argv[1] === new URL(import.meta.url).pathname) {
  const m = await figures();
  if (process.argv.includes('--json')) console.log(JSON.stringify(m));
  else console.table(memoryTable(m));
}
