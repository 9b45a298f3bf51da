import type { Clock } from '../clock.js';
import { type KeyClock, keyNow } from '../clock.js';
import {
  type BanRules,
  DEFAULT_BAN_RULES,
  decide,
  peek,
  pruneState,
  type Sender,
  unban,
  withUnbanSignal,
} from './decision.js';
import type { Policy } from './plans.js';
import { logSize } from './instant-log.js';
import { minuteEntries } from './minute-log.js';
import { SHARDS, ShardedMap } from './sharded-map.js';
import { type CallerState, isFresh } from './state.js';
import type { LimiterStore } from './store.js';
import type { Verdict } from './verdict.js';

export interface MemoryLimiterStoreOptions {
  clock: Clock;
  rules?: BanRules;
  /** How often idle callers are forgotten. */
  sweepIntervalMs?: number;
  /** How many callers a sweep looks at before it lets the event loop run (see `SWEEP_SLICE`). */
  sweepSlice?: number;
  /** How long a slice may run before it lets the event loop run, whatever it has looked at (see `SLICE_BUDGET_MS`). */
  sliceBudgetMs?: number;
  /** Tables the callers are held in (./sharded-map.ts); 1 keeps them in their order of arrival. */
  shards?: number;
}

/**
 * Callers a sweep looks at in one go: a few milliseconds' work, so that 200,000 addresses never hold
 * the event loop (each look prunes one state: about a microsecond once the code is compiled).
 */
export const SWEEP_SLICE = 2_000;

/**
 * The most a slice runs, in real time, before it lets the event loop run. The sweep runs once a minute,
 * so its first slices run before V8 has compiled its code, slower a caller until it has, and a busy
 * machine slows any of them (docs/performance.md#background-work).
 */
export const SLICE_BUDGET_MS = 3;
/** Callers looked at between two readings of the time. */
const LOOKS_PER_READING = 32;

/**
 * The fewest instants a sweep must let go of in one state to write its pruned copy back. A state
 * written back is a new object that lives on (the collector copies it out of its young generation), so
 * a sweep writes back only the states where that buys memory: a busy key's minute, not an address's
 * few requests. What a sweep writes back is then bounded by the minute's traffic (at most one state per
 * `WORTH_WRITING_BACK` requests), whatever the number of callers; what it leaves is at most that many
 * instants per caller, gone at the caller's next request or when it is forgotten.
 */
export const WORTH_WRITING_BACK = 64;

/** How many instants (admissions in the minute, rejections) `pruned` no longer holds. */
function forgotten(state: CallerState, pruned: CallerState): number {
  return (
    minuteEntries(state.minuteLog) -
    minuteEntries(pruned.minuteLog) +
    logSize(state.rejections) -
    logSize(pruned.rejections)
  );
}

/** A store for a single process. Calls are atomic because each runs synchronously to completion. */
export class MemoryLimiterStore implements LimiterStore {
  readonly #callers: ShardedMap<CallerState>;
  readonly #clock: Clock;
  readonly #rules: BanRules;
  readonly #sweeper: NodeJS.Timeout;
  readonly #slice: number;
  readonly #sliceBudgetMs: number;
  /** The sweep under way, one slice per turn of the event loop; null between sweeps. */
  #sweeping: Iterator<[string, CallerState]> | null = null;
  /** How many more callers the sweep under way looks at: as many as were held when it began. */
  #sweepLeft = 0;
  #nextSlice: NodeJS.Immediate | null = null;

  constructor({
    clock,
    rules = DEFAULT_BAN_RULES,
    sweepIntervalMs = 60_000,
    sweepSlice = SWEEP_SLICE,
    sliceBudgetMs = SLICE_BUDGET_MS,
    shards = SHARDS,
  }: MemoryLimiterStoreOptions) {
    this.#callers = new ShardedMap(shards);
    this.#clock = clock;
    this.#rules = rules;
    if (!Number.isInteger(sweepSlice) || sweepSlice < 1)
      throw new RangeError(`sweepSlice must be a positive integer, not ${sweepSlice}`);
    this.#slice = sweepSlice;
    this.#sliceBudgetMs = sliceBudgetMs;
    // unref: a pending sweep must not keep the process alive.
    this.#sweeper = setInterval(() => this.startSweep(), sweepIntervalMs).unref();
  }

  /** Callers currently held. */
  get size(): number {
    return this.#callers.size;
  }

  async hit(caller: string, policy: Policy, unbanSeq = 0, clock?: KeyClock, sender?: Sender): Promise<Verdict> {
    return this.hitNow(caller, policy, unbanSeq, clock, sender);
  }

  hitNow(caller: string, policy: Policy, unbanSeq = 0, clock?: KeyClock, sender?: Sender): Verdict {
    const table = this.#callers.tableOf(caller);
    const { verdict, state } = decide(
      table.get(caller),
      this.#now(clock),
      policy,
      this.#rules,
      unbanSeq,
      false,
      sender,
    );
    table.set(caller, state);
    return verdict;
  }

  async refuse(caller: string, policy: Policy, unbanSeq = 0, clock?: KeyClock, sender?: Sender): Promise<Verdict> {
    const table = this.#callers.tableOf(caller);
    const { verdict, state } = decide(table.get(caller), this.#now(clock), policy, this.#rules, unbanSeq, true, sender);
    table.set(caller, state);
    return verdict;
  }

  async peek(caller: string, policy: Policy, unbanSeq = 0, clock?: KeyClock): Promise<Verdict> {
    return peek(this.#callers.tableOf(caller).get(caller), this.#now(clock), policy, unbanSeq);
  }

  async forget(caller: string): Promise<void> {
    this.#callers.tableOf(caller).delete(caller);
  }

  /** The caller's now: the real time, or a test key's own. */
  #now(clock: KeyClock | undefined): number {
    return clock === undefined ? this.#clock() : keyNow(clock, this.#clock());
  }

  async unban(caller: string): Promise<void> {
    const table = this.#callers.tableOf(caller);
    const state = table.get(caller);
    if (state) table.set(caller, unban(state));
  }

  async banOf(caller: string, unbanSeq = 0, clock?: KeyClock): Promise<{ until: number; level: number } | null> {
    const found = this.#callers.tableOf(caller).get(caller);
    const state = found && withUnbanSignal(found, unbanSeq);
    return state && state.bannedUntil > this.#now(clock) ? { until: state.bannedUntil, level: state.banLevel } : null;
  }

  /** Drops what has expired, and forgets callers whose state now behaves like no state at all: all at once. */
  sweep(): void {
    this.#sweepSome(this.#callers.held(), Number.POSITIVE_INFINITY, Number.POSITIVE_INFINITY);
  }

  /**
   * The same, a slice at a time, letting the event loop run between slices (what the timer does; a
   * sweep under way is left to finish). It looks at the callers held when it began (`ShardedMap.held`:
   * exactly those, unless the full `sweep()` forgot some of them meanwhile, then some newer ones
   * instead). A caller added meanwhile, or forgotten by this sweep and back since, sits after them: it
   * is left for the next sweep, so that callers arriving faster than a slice a turn cannot make a
   * sweep last for ever.
   */
  startSweep(): void {
    if (this.#sweeping) return;
    this.#sweeping = this.#callers.held();
    this.#sweepLeft = this.#callers.size;
    this.#continueSweep();
  }

  /** Whether a sweep is under way. */
  get sweeping(): boolean {
    return this.#sweeping !== null;
  }

  #continueSweep = (): void => {
    this.#nextSlice = null;
    if (!this.#sweeping) return;
    const { looked, done } = this.#sweepSome(
      this.#sweeping,
      Math.min(this.#slice, this.#sweepLeft),
      performance.now() + this.#sliceBudgetMs,
    );
    this.#sweepLeft -= looked;
    if (!done && this.#sweepLeft > 0) this.#nextSlice = setImmediate(this.#continueSweep);
    else this.#sweeping = null;
  };

  /**
   * Looks at up to `count` callers, fewer when none is left (`done`) or once `deadline` (performance.now()) has passed.
   */
  #sweepSome(
    callers: Iterator<[string, CallerState]>,
    count: number,
    deadline: number,
  ): { looked: number; done: boolean } {
    const now = this.#clock();
    let looked = 0;
    for (; looked < count; looked++) {
      if (looked % LOOKS_PER_READING === LOOKS_PER_READING - 1 && performance.now() > deadline) break;
      const next = callers.next();
      if (next.done) return { looked, done: true };
      const [caller, state] = next.value;
      const pruned = pruneState(state, now, this.#rules);
      if (isFresh(pruned)) this.#callers.tableOf(caller).delete(caller);
      // Written back only when it lets go of `WORTH_WRITING_BACK` instants or more. Otherwise the state
      // stays as it was, which decides the same (every decision prunes first): a sweep over callers that
      // stay (all day, once they have counted) then leaves the collector only short-lived garbage, not
      // a flood of new states to copy out of the young generation, each copy holding the loop.
      else if (forgotten(state, pruned) >= WORTH_WRITING_BACK) this.#callers.tableOf(caller).set(caller, pruned);
    }
    return { looked, done: false };
  }

  /** Nothing: a store in memory serves one instance, whose verdicts carry no stamp. */
  async restamp(_callers: readonly string[]): Promise<void> {}
  readonly stamps: boolean = false;

  async close(): Promise<void> {
    clearInterval(this.#sweeper);
    if (this.#nextSlice) clearImmediate(this.#nextSlice);
    this.#sweeping = null;
    this.#callers.clear();
  }
}
