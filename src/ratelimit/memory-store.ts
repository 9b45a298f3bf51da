import type { Clock } from '../clock.js';
import { type BanRules, DEFAULT_BAN_RULES, decide, peek, pruneState, unban, withUnbanSignal } from './decision.js';
import type { Policy } from './plans.js';
import { type CallerState, isFresh } from './state.js';
import type { LimiterStore } from './store.js';
import type { Verdict } from './verdict.js';

export interface MemoryLimiterStoreOptions {
  clock?: Clock;
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
  #nextSlice: NodeJS.Immediate | null = null;

  constructor({ clock = Date.now, rules = DEFAULT_BAN_RULES, sweepIntervalMs = 60_000, sweepSlice = SWEEP_SLICE }: MemoryLimiterStoreOptions = {}) {
    this.#clock = clock;
    this.#rules = rules;
    this.#slice = sweepSlice;
    // unref: a pending sweep must not keep the process alive.
    this.#sweeper = setInterval(() => this.startSweep(), sweepIntervalMs).unref();
  }

  /** Callers currently held. */
  get size(): number {
    return this.#callers.size;
  }

  async hit(caller: string, policy: Policy, unbanSeq = 0): Promise<Verdict> {
    const { verdict, state } = decide(this.#callers.get(caller), this.#clock(), policy, this.#rules, unbanSeq);
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
   * The same, a slice at a time, letting the event loop run between slices (what the timer does). A
   * caller added meanwhile may or may not be looked at; one that was there when it began is.
   */
  startSweep(): void {
    if (this.#sweeping) return;
    this.#sweeping = this.#callers.entries();
    this.#continueSweep();
  }

  /** Whether a sweep is under way. */
  get sweeping(): boolean {
    return this.#sweeping !== null;
  }

  #continueSweep = (): void => {
    this.#nextSlice = null;
    if (!this.#sweeping) return;
    if (this.#sweepSome(this.#sweeping, this.#slice)) this.#nextSlice = setImmediate(this.#continueSweep);
    else this.#sweeping = null;
  };

  /** Looks at up to `count` callers; true when some are left. */
  #sweepSome(callers: Iterator<[string, CallerState]>, count: number): boolean {
    const now = this.#clock();
    for (let i = 0; i < count; i++) {
      const next = callers.next();
      if (next.done) return false;
      const [caller, state] = next.value;
      const pruned = pruneState(state, now, this.#rules);
      if (isFresh(pruned)) this.#callers.delete(caller);
      else this.#callers.set(caller, pruned);
    }
    return true;
  }

  async close(): Promise<void> {
    clearInterval(this.#sweeper);
    if (this.#nextSlice) clearImmediate(this.#nextSlice);
    this.#sweeping = null;
    this.#callers.clear();
  }
}
