import { EMPTY_LOG, logSize, type InstantLog } from './instant-log.js';
import { EMPTY_MINUTE, type MinuteLog, minuteEntries } from './minute-log.js';

/**
 * What the limiter remembers about one caller. Plain numbers and arrays of numbers, so that the
 * Redis store's Lua script can hold exactly the same data. Nothing here depends on the caller's
 * policy: the policy is an argument of each decision, so a plan change applies from the next request
 * and what was already counted stays counted.
 */
export interface CallerState {
  /** Admitted requests that may still be inside the sliding minute, oldest first, one entry per millisecond. */
  readonly minuteLog: MinuteLog;
  /** The UTC day (see `dayOf`) that `dayCount` belongs to. */
  readonly day: number;
  /** Requests admitted during `day`. */
  readonly dayCount: number;
  /** Instants of rate-limited rejections that still count toward a ban, oldest first. */
  readonly rejections: InstantLog;
  /** End (ms) of the ban in force; 0 when there is none (never banned, expired or lifted). */
  readonly bannedUntil: number;
  /**
   * Escalation history, kept when a ban ends or is lifted: 1 for the first ban of a chain, plus one
   * for each further ban within the escalation window. 0 once the history has lapsed.
   */
  readonly banLevel: number;
  /** Scheduled end of the latest ban; the escalation window runs from it, even when it was lifted early. */
  readonly lastBanEnd: number;
  /**
   * The highest unban signal applied (a counter kept on the key's row, raised by every unban): each
   * signal lifts a ban once, on whichever instance first sees it, and never again.
   */
  readonly unbanSeq: number;
  /**
   * Until when (ms) the latest `429` asked the caller to wait: a `429` for a request sent before then
   * counts toward a ban; one sent after it, by a client that waited, does not. 0 once it has passed.
   */
  readonly waitEnd: number;
  /**
   * The answer the in-flight allowance runs from (http/in-flight.ts): the latest `429` that it did
   * not forgive, when it was written (real time), on which connection, and the newest connection then.
   */
  readonly refusedReal: number;
  readonly refusedConn: number;
  readonly refusedMark: number;
}

export const MINUTE_MS = 60_000;
export const DAY_MS = 86_400_000;

export const FRESH_STATE: CallerState = {
  minuteLog: EMPTY_MINUTE,
  day: 0,
  dayCount: 0,
  rejections: EMPTY_LOG,
  bannedUntil: 0,
  banLevel: 0,
  lastBanEnd: 0,
  unbanSeq: 0,
  waitEnd: 0,
  refusedReal: 0,
  refusedConn: 0,
  refusedMark: 0,
};

/** The UTC calendar day of an instant; the day window resets when it changes, at 00:00:00 UTC. */
export function dayOf(now: number): number {
  return Math.floor(now / DAY_MS);
}

/**
 * Whether a (pruned) state behaves exactly like no state at all, so that it may be forgotten.
 * `unbanSeq` does not matter: a signal applied to a fresh state changes nothing.
 */
export function isFresh(state: CallerState): boolean {
  return (
    minuteEntries(state.minuteLog) === 0 &&
    state.dayCount === 0 &&
    logSize(state.rejections) === 0 &&
    state.bannedUntil === 0 &&
    state.banLevel === 0 &&
    state.waitEnd === 0
  );
}
