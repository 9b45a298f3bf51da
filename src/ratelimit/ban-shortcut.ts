import type { Clock } from '../clock.js';
import type { KeyClock } from '../clock.js';
import type { Sender } from './decision.js';
import type { Policy } from './plans.js';
import type { LimiterStore } from './store.js';
import { type Banned, ceilSeconds, type Verdict } from './verdict.js';

interface Held {
  /** The ban as the store last answered it; only `at` and the wait change while it lasts. */
  verdict: Banned;
  policy: Policy;
  unbanSeq: number;
  /** The store's clock less ours, as seen on that answer (Redis decides on its own `TIME`). */
  offset: number;
  /** Until when (store's clock) the answer may be repeated without asking the store. */
  until: number;
}

/**
 * Refuses a banned caller without asking the store (a Redis round trip) until the ban's end, which the
 * store told on the first request of the ban. Answers only what the store itself would: the same ban, policy and unban
 * signal (an unban anywhere raises the signal on the key's row, or comes through `unban` here), and only while
 * the same window binds the headers (`bindingUntil`). It stops short of the ban's end by `MARGIN_MS`,
 * so that a difference between the clocks can only send a request to the store, never refuse one the
 * store would admit. Only banned callers are held, at most `max`.
 */
export class BanShortcut implements LimiterStore {
  static readonly MARGIN_MS = 50;
  readonly #held = new Map<string, Held>();
  readonly #store: LimiterStore;
  readonly #clock: Clock;
  readonly #max: number;

  constructor(store: LimiterStore, { clock, max = 100_000 }: { clock: Clock; max?: number }) {
    this.#store = store;
    this.#clock = clock;
    this.#max = max;
  }

  async hit(caller: string, policy: Policy, unbanSeq = 0, clock?: KeyClock, sender?: Sender): Promise<Verdict> {
    // A test key's clock moves by jumps: its bans are the store's to judge, every time.
    if (clock) return this.#store.hit(caller, policy, unbanSeq, clock, sender);
    const known = this.hitNow(caller, policy, unbanSeq, undefined, sender);
    if (known) return known;
    const verdict = await this.#store.hit(caller, policy, unbanSeq, undefined, sender);
    this.#hold(caller, verdict, policy, unbanSeq);
    return verdict;
  }

  /** The ban held for the caller, else what the store can decide at once. */
  hitNow(caller: string, policy: Policy, unbanSeq = 0, clock?: KeyClock, sender?: Sender): Verdict | undefined {
    if (clock) return this.#store.hitNow(caller, policy, unbanSeq, clock, sender);
    const held = this.#heldBan(caller, policy, unbanSeq);
    if (held) return held;
    const verdict = this.#store.hitNow(caller, policy, unbanSeq, undefined, sender);
    if (verdict) this.#hold(caller, verdict, policy, unbanSeq);
    return verdict;
  }

  /** A forced refusal meets a held ban as any request does. */
  async refuse(caller: string, policy: Policy, unbanSeq = 0, clock?: KeyClock, sender?: Sender): Promise<Verdict> {
    if (clock) return this.#store.refuse(caller, policy, unbanSeq, clock, sender);
    const held = this.#heldBan(caller, policy, unbanSeq);
    if (held) return held;
    const verdict = await this.#store.refuse(caller, policy, unbanSeq, undefined, sender);
    this.#hold(caller, verdict, policy, unbanSeq);
    return verdict;
  }

  #heldBan(caller: string, policy: Policy, unbanSeq: number): Verdict | undefined {
    const held = this.#held.get(caller);
    if (!held) return undefined;
    const at = this.#clock() + held.offset;
    if (at < held.until && held.unbanSeq === unbanSeq && samePolicy(held.policy, policy)) {
      return { ...held.verdict, at, retryAfterSeconds: ceilSeconds(held.verdict.bannedUntil - at) };
    }
    this.#held.delete(caller);
    return undefined;
  }

  peek(caller: string, policy: Policy, unbanSeq?: number, clock?: KeyClock): Promise<Verdict> {
    return this.#store.peek(caller, policy, unbanSeq, clock);
  }

  forget(caller: string): Promise<void> {
    this.#held.delete(caller);
    return this.#store.forget(caller);
  }

  unban(caller: string): Promise<void> {
    this.#held.delete(caller);
    return this.#store.unban(caller);
  }

  banOf(caller: string, unbanSeq?: number, clock?: KeyClock): Promise<{ until: number; level: number } | null> {
    return this.#store.banOf(caller, unbanSeq, clock);
  }

  get stamps(): boolean {
    return this.#store.stamps;
  }

  restamp(callers: readonly string[]): Promise<void> {
    return this.#store.restamp(callers);
  }

  close(): Promise<void> {
    this.#held.clear();
    return this.#store.close();
  }

  #hold(caller: string, banned: Verdict, policy: Policy, unbanSeq: number): void {
    if (banned.kind !== 'banned') return;
    if (this.#held.size >= this.#max) this.#forgetEnded();
    if (this.#held.size >= this.#max) return;
    const until = Math.min(banned.bannedUntil - BanShortcut.MARGIN_MS, banned.bindingUntil);
    this.#held.set(caller, { verdict: banned, policy, unbanSeq, offset: banned.at - this.#clock(), until });
  }

  #forgetEnded(): void {
    const now = this.#clock();
    for (const [caller, held] of this.#held) if (now + held.offset >= held.until) this.#held.delete(caller);
  }
}

function samePolicy(a: Policy, b: Policy): boolean {
  return a === b || (a.name === b.name && a.perMinute === b.perMinute && a.perDay === b.perDay);
}
