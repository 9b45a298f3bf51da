/**
 * The memory limiter's sweep over 200,000 client addresses (127.x.y.z): how long it holds the event
 * loop at most, a slice at a time (what the timer runs) against all at once, and the heap it gives back.
 *
 *   node --expose-gc --import tsx bench/sweep.ts [--json]
 */
import { MemoryLimiterStore } from '../src/ratelimit/memory-store.js';
import { ANONYMOUS_POLICY } from '../src/ratelimit/plans.js';

const ADDRESSES = 200_000;
const gc = (globalThis as { gc?: () => void }).gc ?? (() => {});
const heapMb = () => (gc(), gc(), process.memoryUsage().heapUsed / 1e6);

async function filled(clock: { now: number }) {
  const store = new MemoryLimiterStore({ clock: () => clock.now, sweepIntervalMs: 3_600_000 });
  for (let i = 0; i < ADDRESSES; i++) await store.hit(`ip:127.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`, ANONYMOUS_POLICY);
  clock.now += 86_400_000;
  return store;
}

/** The longest the loop was held while `sweep` ran (the largest gap between ticks of a 1 ms timer), and how long it all took. */
async function measure(sweep: (store: MemoryLimiterStore) => Promise<void>, store: MemoryLimiterStore) {
  let last = performance.now();
  let maxGap = 0;
  const ticker = setInterval(() => {
    const now = performance.now();
    maxGap = Math.max(maxGap, now - last);
    last = now;
  }, 1);
  await new Promise((resolve) => setTimeout(resolve, 20));
  maxGap = 0;
  const started = performance.now();
  await sweep(store);
  const tookMs = performance.now() - started;
  await new Promise((resolve) => setTimeout(resolve, 20));
  clearInterval(ticker);
  return { maxBlockMs: Math.round(maxGap * 10) / 10, tookMs: Math.round(tookMs) };
}

const clock = { now: Date.parse('2024-03-01T12:00:00.000Z') };
const before = heapMb();
const store = await filled(clock);
const withCallers = heapMb();
const sliced = await measure(async (s) => {
  s.startSweep();
  while (s.sweeping) await new Promise((resolve) => setImmediate(resolve));
}, store);
const left = store.size;
const after = heapMb();
await store.close();
const whole = await measure(async (s) => s.sweep(), await filled(clock));

const figures = {
  addresses: ADDRESSES,
  heapMb: { before: Math.round(before), withCallers: Math.round(withCallers), afterSweep: Math.round(after) },
  sliced: { ...sliced, callersLeft: left },
  allAtOnce: whole,
};
if (process.argv.includes('--json')) console.log(JSON.stringify(figures));
else console.table({ 'a slice at a time (the timer)': sliced, 'all at once': whole });
