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
}

/** A store for a single process. Calls are atomic because each runs synchronously to completion. */
export class MemoryLimiterStore implements LimiterStore {
  readonly #callers = new Map<string, CallerState>();
  readonly #clock: Clock;
  readonly #rules: BanRules;
  readonly #sweeper: NodeJS.Timeout;

  constructor({ clock = Date.now, rules = DEFAULT_BAN_RULES, sweepIntervalMs = 60_000 }: MemoryLimiterStoreOptions = {}) {
    this.#clock = clock;
    this.#rules = rules;
    // unref: a pending sweep must not keep the process alive.
    this.#sweeper = setInterval(() => this.sweep(), sweepIntervalMs).unref();
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

  /** Drops what has expired, and forgets callers whose state now behaves like no state at all. */
  sweep(): void {
    const now = this.#clock();
    for (const [caller, state] of this.#callers) {
      const pruned = pruneState(state, now, this.#rules);
      if (isFresh(pruned)) this.#callers.delete(caller);
      else this.#callers.set(caller, pruned);
    }
  }

  async close(): Promise<void> {
    clearInterval(this.#sweeper);
    this.#callers.clear();
  }
}
