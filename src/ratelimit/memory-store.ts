import type { Clock } from '../clock.js';
import { type BanRules, DEFAULT_BAN_RULES, decide, peek, pruneState, unban, withUnbanSignal } from './decision.js';
import type { Policy } from './plans.js';
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
}

/**
 * Callers a sweep looks at in one go: a few milliseconds' work, so that 200,000 addresses never hold
 * the event loop (each look prunes one state: about a microsecond).
 */
export const SWEEP_SLICE = 2_000;

/** A store for a single process. Calls are atomic because each runs synchronously to completion. */
export class MemoryLimiterStore implements LimiterStore {
  readonly #callers = new Map<string, CallerState>();
  readonly #clock: Clock;
  readonly #rules: BanRules;
  readonly #sweeper: NodeJS.Timeout;
  readonly #slice: number;
  /** The sweep under way, one slice per turn of the event loop; null between sweeps. */
  #sweeping: Iterator<[string, CallerState]> | null = null;
  /** How many more callers the sweep under way looks at: as many as were held when it began. */
  #sweepLeft = 0;
  #nextSlice: NodeJS.Immediate | null = null;

  constructor({ clock, rules = DEFAULT_BAN_RULES, sweepIntervalMs = 60_000, sweepSlice = SWEEP_SLICE }: MemoryLimiterStoreOptions) {
    this.#clock = clock;
    this.#rules = rules;
    if (!Number.isInteger(sweepSlice) || sweepSlice < 1) throw new RangeError(`sweepSlice must be a positive integer, not ${sweepSlice}`);
    this.#slice = sweepSlice;
    // unref: a pending sweep must not keep the process alive.
    this.#sweeper = setInterval(() => this.startSweep(), sweepIntervalMs).unref();
  }

  /** Callers currently held. */
  get size(): number {
    return this.#callers.size;
  }

  async hit(caller: string, policy: Policy, unbanSeq = 0): Promise<Verdict> {
    return this.hitNow(caller, policy, unbanSeq);
  }

  hitNow(caller: string, policy: Policy, unbanSeq = 0): Verdict {
    const { verdict, state } = decide(this.#callers.get(caller), this.#clock(), policy, this.#rules, unbanSeq);
    this.#callers.set(caller, state);
    return verdict;
  }

  async refuse(caller: string, policy: Policy, unbanSeq = 0): Promise<Verdict> {
    const { verdict, state } = decide(this.#callers.get(caller), this.#clock(), policy, this.#rules, unbanSeq, true);
    this.#callers.set(caller, state);
    return verdict;
  }

  async peek(caller: string, policy: Policy, unbanSeq = 0): Promise<Verdict> {
    return peek(this.#callers.get(caller), this.#clock(), policy, unbanSeq);
  }

  async unban(caller: string): Promise<void> {
    const state = this.#callers.get(caller);
    if (state) this.#callers.set(caller, unban(state));
  }

  async banOf(caller: string, unbanSeq = 0): Promise<{ until: number; level: number } | null> {
    const found = this.#callers.get(caller);
    const state = found && withUnbanSignal(found, unbanSeq);
    return state && state.bannedUntil > this.#clock() ? { until: state.bannedUntil, level: state.banLevel } : null;
  }

  /** Drops what has expired, and forgets callers whose state now behaves like no state at all: all at once. */
  sweep(): void {
    this.#sweepSome(this.#callers.entries(), Number.POSITIVE_INFINITY);
  }

  /**
   * The same, a slice at a time, letting the event loop run between slices (what the timer does; a
   * sweep under way is left to finish). It looks at as many callers as were held when it began: a Map
   * iterates in insertion order and a caller's update keeps its place, so those are exactly the ones
   * held then, unless the full `sweep()` forgot some of them meanwhile (then some newer ones instead).
   * A caller added meanwhile, or forgotten by this sweep and back since, sits after them: it may be
   * left for the next sweep, so that callers arriving faster than a slice a turn cannot make a sweep
   * last for ever.
   */
  startSweep(): void {
    if (this.#sweeping) return;
    this.#sweeping = this.#callers.entries();
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
    const count = Math.min(this.#slice, this.#sweepLeft);
    const looked = this.#sweepSome(this.#sweeping, count);
    this.#sweepLeft -= looked;
    if (looked === count && this.#sweepLeft > 0) this.#nextSlice = setImmediate(this.#continueSweep);
    else this.#sweeping = null;
  };

  /** Looks at up to `count` callers, fewer only when none is left; returns how many. */
  #sweepSome(callers: Iterator<[string, CallerState]>, count: number): number {
    const now = this.#clock();
    let looked = 0;
    for (; looked < count; looked++) {
      const next = callers.next();
      if (next.done) break;
      const [caller, state] = next.value;
      const pruned = pruneState(state, now, this.#rules);
      if (isFresh(pruned)) this.#callers.delete(caller);
      // Written back only when it lets go of memory. Otherwise the state stays as it was, which decides
      // the same (every decision prunes first): a sweep over callers that stay (all day, once they have
      // counted) then leaves the collector only short-lived garbage, not 200,000 states to promote.
      else if (pruned.minuteLog !== state.minuteLog || pruned.rejections !== state.rejections) this.#callers.set(caller, pruned);
    }
    return looked;
  }

  async close(): Promise<void> {
    clearInterval(this.#sweeper);
    if (this.#nextSlice) clearImmediate(this.#nextSlice);
    this.#sweeping = null;
    this.#callers.clear();
  }
}
