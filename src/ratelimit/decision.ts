/**
 * The rate limiter's rules as pure functions of (state, now, policy, rules). No I/O and no clock:
 * a store loads the caller's state, calls one of these and saves what it returns, atomically.
 * The Redis store's Lua script must reproduce them exactly; test/ratelimit/vectors.json proves it.
 */
import { EMPTY_LOG, logAfter, logAppend, logNewest, logSize } from './instant-log.js';
import { minuteAfter, minuteAppend } from './minute-log.js';
import type { Policy } from './plans.js';
import { type Arrival, inFlight } from '../http/in-flight.js';
import { type CallerState, dayOf, FRESH_STATE, MINUTE_MS } from './state.js';
import { type Assessment, assess, banned, bindingUntil, rateLimited, type Verdict } from './verdict.js';

/**
 * When a caller that keeps sending after being rate limited is banned, and for how long. Only a `429`
 * for a request sent before the `Retry-After` of the caller's previous `429` had elapsed counts toward a
 * ban (and not one the in-flight allowance forgives): a client that waits every wait it is told is never
 * banned (docs/rate-limits.md#bans).
 */
export interface BanRules {
  /** This many such rejections within `withinMs` start a ban (the last is still an ordinary 429). */
  readonly rejections: number;
  readonly withinMs: number;
  readonly firstBanMs: number;
  /**
   * Each further ban that starts within `escalationWindowMs` of the previous one's end lasts twice as long, up to this.
   */
  readonly maxBanMs: number;
  readonly escalationWindowMs: number;
}

export const DEFAULT_BAN_RULES: BanRules = {
  rejections: 10,
  withinMs: 60_000,
  firstBanMs: 60_000,
  maxBanMs: 3_600_000,
  escalationWindowMs: 86_400_000,
};

export interface Decision {
  readonly verdict: Verdict;
  readonly state: CallerState;
}

/**
 * Decides one request: admitted requests count in both windows, refused and banned ones in neither.
 * A `forced` refusal (a test key's `fault=429`, see faults/) is decided as if the windows had no room:
 * a ban in force answers as ever, and otherwise the rejection is judged toward a ban like any other.
 * `sender` tells where the request came from, for the in-flight allowance (none: it gets no allowance).
 * The minute log holds only requests of the last 60 s and grows only while fewer than the policy's
 * per-minute limit are in it, so it never exceeds the largest limit in force during the last minute;
 * and it holds one entry per millisecond (./minute-log.ts), so never more than 60,000 entries.
 * It is not cut down on a downgrade: what was counted stays counted, even if the key is upgraded back.
 */
export function decide(
  state: CallerState | undefined,
  now: number,
  policy: Policy,
  rules: BanRules,
  unbanSeq = 0,
  forced = false,
  sender?: Sender,
): Decision {
  const current = withUnbanSignal(pruneState(state ?? FRESH_STATE, now, rules), unbanSeq);
  const assessment = assess(current, now, policy);
  // Verdict literals start with `kind`: V8 builds a literal that starts with a spread by a slower, generic path.
  if (current.bannedUntil > now) {
    return {
      verdict: banned(assessment, current.bannedUntil, bindingUntil(current.minuteLog, assessment)),
      state: current,
    };
  }
  if (!forced && assessment.minute.remaining > 0 && assessment.day.remaining > 0) {
    const admitted = { ...current, minuteLog: minuteAppend(current.minuteLog, now), dayCount: current.dayCount + 1 };
    return { verdict: { kind: 'admitted', ...assess(admitted, now, policy) }, state: admitted };
  }
  return refuse(current, assessment, rules, policy.bans !== false, sender);
}

/**
 * Where a request came from, for the in-flight allowance (../http/in-flight.ts): the real instant it was
 * decided, its connection and when that opened, and the newest connection of its instance then (the
 * `mark` of the `429` it may be answered with).
 */
export interface Sender extends Arrival {
  readonly mark: number;
}

/** The headers a caller would see now, counting nothing. */
export function peek(state: CallerState | undefined, now: number, policy: Policy, unbanSeq = 0): Verdict {
  const current = withUnbanSignal(state ?? FRESH_STATE, unbanSeq);
  const assessment = assess(current, now, policy);
  return current.bannedUntil > now
    ? { kind: 'peek', ...assessment, bannedUntil: current.bannedUntil }
    : { kind: 'peek', ...assessment };
}

/**
 * An administrator's unban: lifts the ban at once and forgives the 429s counted toward the next one.
 * The escalation history stays, so a caller banned again soon still gets the doubled length.
 */
export function unban(state: CallerState): CallerState {
  return { ...state, bannedUntil: 0, rejections: EMPTY_LOG, ...NO_WAIT };
}

/** No `429` waited on: the state of a caller whose latest wait has passed. */
const NO_WAIT = { waitEnd: 0, refusedReal: 0, refusedConn: 0, refusedMark: 0 } as const;

/** An unban made elsewhere (the CLI, another instance) arrives as a number that only grows; it applies once. */
export function withUnbanSignal(state: CallerState, unbanSeq: number): CallerState {
  return unbanSeq > state.unbanSeq ? { ...unban(state), unbanSeq } : state;
}

/** Forgets whatever can no longer affect a decision at `now`, under any policy. */
export function pruneState(state: CallerState, now: number, rules: BanRules): CallerState {
  const today = dayOf(now);
  const historyLapsed = now - state.lastBanEnd >= rules.escalationWindowMs;
  return {
    minuteLog: minuteAfter(state.minuteLog, now - MINUTE_MS),
    day: today,
    dayCount: state.day === today ? state.dayCount : 0,
    rejections: logNewest(logAfter(state.rejections, now - rules.withinMs), rules.rejections),
    bannedUntil: state.bannedUntil > now ? state.bannedUntil : 0,
    banLevel: historyLapsed ? 0 : state.banLevel,
    lastBanEnd: historyLapsed ? 0 : state.lastBanEnd,
    unbanSeq: state.unbanSeq,
    ...(state.waitEnd > now
      ? {
          waitEnd: state.waitEnd,
          refusedReal: state.refusedReal,
          refusedConn: state.refusedConn,
          refusedMark: state.refusedMark,
        }
      : NO_WAIT),
  };
}

/**
 * A `429`: its wait, and whether it counts toward a ban: the request came before the previous `429`'s
 * wait had passed, and is not one the in-flight allowance forgives. A forgiven one leaves the allowance
 * running from the answer it follows, so that requests that keep coming are not forgiven for ever.
 */
function refuse(state: CallerState, assessment: Assessment, rules: BanRules, bans: boolean, sender?: Sender): Decision {
  const now = assessment.at;
  const verdict = rateLimited(assessment, 0);
  if (!bans) return { verdict, state };
  const forgiven =
    sender !== undefined &&
    inFlight(sender, { real: state.refusedReal, conn: state.refusedConn, mark: state.refusedMark });
  const waited: CallerState = {
    ...state,
    waitEnd: now + verdict.retryAfterSeconds * 1000,
    ...(forgiven
      ? {}
      : { refusedReal: sender?.real ?? 0, refusedConn: sender?.conn ?? 0, refusedMark: sender?.mark ?? 0 }),
  };
  if (forgiven || now >= state.waitEnd) return { verdict, state: waited };
  const rejections = logAppend(state.rejections, now);
  if (logSize(rejections) < rules.rejections) return { verdict, state: { ...waited, rejections } };
  const started = startBan(waited, now, rules);
  return { verdict: rateLimited(assessment, started.bannedUntil), state: started };
}

/**
 * Starts a ban; `state` is pruned, so a `banLevel` above 0 means the previous ban ended within the escalation window.
 */
function startBan(state: CallerState, now: number, rules: BanRules): CallerState {
  const banLevel = state.banLevel + 1;
  const until = now + Math.min(rules.firstBanMs * 2 ** (banLevel - 1), rules.maxBanMs);
  return { ...state, rejections: EMPTY_LOG, bannedUntil: until, banLevel, lastBanEnd: until, ...NO_WAIT };
}
