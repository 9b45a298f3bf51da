/**
 * Decisions per second of the pure rate-limit core, and heap held per caller by the memory store.
 *
 *   npm run bench        (node --expose-gc --import tsx bench/limiter.ts)
 *
 * Without --expose-gc the memory figures are skipped (they need a garbage collection before each reading).
 */
import { DEFAULT_BAN_RULES, decide, peek } from '../src/ratelimit/decision.js';
import { rateLimitHeaders } from '../src/ratelimit/headers.js';
import { RETRY_AFTER_HEADER } from '../src/http/responses.js';
import { MemoryLimiterStore } from '../src/ratelimit/memory-store.js';
import { type Policy, policyFor } from '../src/ratelimit/plans.js';
import type { CallerState } from '../src/ratelimit/state.js';

const NOON = Date.parse('2024-03-01T12:00:00.000Z');
const rules = DEFAULT_BAN_RULES;
const free = policyFor('free');
const business = policyFor('business');

/** A caller that sent `requests` requests at noon. */
function callerAfter(requests: number, policy: Policy): CallerState | undefined {
  let state: CallerState | undefined;
  for (let i = 0; i < requests; i++) state = decide(state, NOON, policy, rules).state;
  return state;
}

/**
 * A few kept results, so that the optimiser cannot drop the calls being timed (more would age into the old generation).
 */
const kept: unknown[] = new Array(16);

function perSecond(run: () => unknown): number {
  const batch = () => {
    for (let i = 0; i < 10_000; i++) kept[i & 15] = run();
  };
  batch();
  const start = performance.now();
  let calls = 0;
  while (performance.now() - start < 1_000) {
    batch();
    calls += 10_000;
  }
  return calls / ((performance.now() - start) / 1_000);
}

/** Each timed call starts from the same state, so that every call takes the same path. */
function throughput(): void {
  const freeAlmostFull = callerAfter(59, free);
  const freeFull = callerAfter(60, free);
  const businessAlmostFull = callerAfter(999, business);
  const businessFull = callerAfter(1_000, business);
  let banned = freeFull;
  for (let i = 0; i < 10; i++) banned = decide(banned, NOON, free, rules).state;
  const refusal = decide(freeFull, NOON + 1, free, rules).verdict;
  if (!(RETRY_AFTER_HEADER in rateLimitHeaders(refusal))) throw new Error('the refusal row must time a 429');
  const rows: [string, () => unknown][] = [
    ['admitted, free (59 in the minute)', () => decide(freeAlmostFull, NOON + 1, free, rules)],
    ['admitted, business (999 in the minute)', () => decide(businessAlmostFull, NOON + 1, business, rules)],
    ['rate-limited, free (minute full)', () => decide(freeFull, NOON + 1, free, rules)],
    ['rate-limited, business (minute full)', () => decide(businessFull, NOON + 1, business, rules)],
    ['banned', () => decide(banned, NOON + 1, free, rules)],
    ['peek, free (minute full)', () => peek(freeFull, NOON + 1, free)],
    ['rateLimitHeaders of a 429', () => rateLimitHeaders(refusal)],
  ];
  console.log('\nPure core, one thread');
  console.table(rows.map(([path, run]) => ({ path, 'calls/s': Math.round(perSecond(run)).toLocaleString('en') })));
}

async function bytesPerCaller(gc: () => void, requests: number, callers = 100_000): Promise<number> {
  const store = new MemoryLimiterStore({ clock: () => NOON });
  gc();
  const before = process.memoryUsage().heapUsed;
  for (let i = 0; i < callers; i++) {
    // The shape of a real caller id (`key:` + a key id), since the store holds it too.
    const caller = `key:key_${i.toString(16).padStart(16, '0')}`;
    for (let r = 0; r < requests; r++) await store.hit(caller, free);
  }
  gc();
  const held = process.memoryUsage().heapUsed - before;
  await store.close();
  return held / callers;
}

async function memory(): Promise<void> {
  const gc = globalThis.gc;
  if (!gc) {
    console.log('\nMemory per caller: skipped, run with --expose-gc');
    return;
  }
  const rows = [
    { caller: 'free, 1 request', bytes: await bytesPerCaller(() => void gc(), 1) },
    { caller: 'free, 60 requests (full minute log)', bytes: await bytesPerCaller(() => void gc(), 60) },
  ];
  console.log('\nMemory store, 100,000 callers');
  console.table(rows.map(({ caller, bytes }) => ({ caller, 'bytes/caller': Math.round(bytes) })));
}

throughput();
await memory();
