import type { KeyClock } from '../clock.js';
import type { Sender } from './decision.js';
import type { Policy } from './plans.js';
import type { Verdict } from './verdict.js';

/**
 * Where callers' limiter states live. Every call is atomic for one caller and reads the time from
 * the clock given to the store's constructor, or, for a test key, from its own clock (`clock`: the
 * real time moved, ../clock.ts; every call of one caller gives the same); the rules themselves
 * are those of ./decision.ts. `sender` says where a request came from, for the in-flight allowance of
 * the ban rule (../http/in-flight.ts); without it a refusal gets no allowance.
 */
export interface LimiterStore {
  /**
   * Decides a request and counts it if admitted. `unbanSeq` is the caller's unban signal (see
   * `CallerState.unbanSeq`); a number above the one last applied lifts the ban first.
   */
  hit(caller: string, policy: Policy, unbanSeq?: number, clock?: KeyClock, sender?: Sender): Promise<Verdict>;
  /**
   * `hit`, decided at once when the store can decide without waiting for I/O (a store in memory, a ban
   * already known); else `undefined`, having counted nothing: the limit step answers at once when it can (./step.ts).
   */
  hitNow(caller: string, policy: Policy, unbanSeq?: number, clock?: KeyClock, sender?: Sender): Verdict | undefined;
  /**
   * Refuses a request as if its windows had no room (a test key's forced `429`, see faults/): a ban in
   * force answers as ever; otherwise a `rate-limited` verdict whose rejection counts toward a ban.
   */
  refuse(caller: string, policy: Policy, unbanSeq?: number, clock?: KeyClock, sender?: Sender): Promise<Verdict>;
  /** The caller's headers now, counting nothing (a `peek` verdict, never a refusal). */
  peek(caller: string, policy: Policy, unbanSeq?: number, clock?: KeyClock): Promise<Verdict>;
  /** Lifts the caller's ban and forgives its 429s; the escalation history is kept. */
  unban(caller: string): Promise<void>;
  /**
   * The ban in force, if any; `level` 1 is a first ban, 2 a doubled one, and so on. An `unbanSeq`
   * not yet applied counts as applied (without writing it), so a pending unban shows as lifted.
   */
  banOf(caller: string, unbanSeq?: number, clock?: KeyClock): Promise<{ until: number; level: number } | null>;
  /** Forgets everything of the caller: its windows, its ban and the history that doubles bans (a test key's reset). */
  forget(caller: string): Promise<void>;
  /**
   * Where the store is shared by instances: gives each caller a new stamp (`Verdict.stamp`), once what
   * its answers held in memory show has changed and before the change is answered. Elsewhere nothing.
   */
  restamp(callers: readonly string[]): Promise<void>;
  /** Whether its admissions and peeks carry the caller's stamp (`Verdict.stamp`): a store shared by instances. */
  readonly stamps: boolean;
  close(): Promise<void>;
}
