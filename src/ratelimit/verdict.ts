import { type MinuteLog, minuteAfter, minuteCount, minuteNewest, minuteRequestAt } from './minute-log.js';
import type { Policy } from './plans.js';
import { type CallerState, DAY_MS, dayOf, MINUTE_MS } from './state.js';

export type WindowName = 'minute' | 'day';

/** One window as the caller's own counts leave it (a ban does not change these numbers). */
export interface WindowStatus {
  readonly limit: number;
  /** Never negative; after an admitted request it already reflects that request. */
  readonly remaining: number;
  /** Instant (ms) at which the window is empty again: newest counted request + 60 s, or the next UTC midnight. */
  readonly resetAt: number;
  /** How long until one more request would fit in this window: 0 while `remaining` > 0. */
  readonly nextAdmitInMs: number;
  /**
   * The window in effect now (draft-ietf-httpapi-ratelimit-headers-11's `t` while quota remains): the
   * minute, until its oldest counted request leaves (the whole minute when none is counted); the day,
   * until the next UTC midnight. Never 0.
   */
  readonly windowMs: number;
}

/** What every verdict says about the caller's windows. */
export interface Assessment {
  /** The policy's name, which the 429 body reports as `plan`. */
  readonly plan: Policy['name'];
  /** The instant (ms) the verdict was reached. */
  readonly at: number;
  readonly minute: WindowStatus;
  readonly day: WindowStatus;
  /**
   * Where the store is shared (Redis), the caller's stamp as the admission or peek read it: a new one
   * once anything its answers held in memory show has changed (`LimiterStore.restamp`). Else undefined.
   */
  readonly stamp?: string | undefined;
}

export type Verdict =
  | (Assessment & { readonly kind: 'admitted' })
  | (Assessment & {
      readonly kind: 'rate-limited';
      /** The window that refused; when both are full, the one that needs the longer wait. */
      readonly window: WindowName;
      /** The limit of `window`. */
      readonly limit: number;
      /**
       * Whole seconds (≥ 1) after which the same request is admitted; for the rejection that starts a
       * ban, the ban's end (or the window's next slot, should that come later).
       */
      readonly retryAfterSeconds: number;
      /** Set when this very rejection started a ban (the rejection itself is still an ordinary 429). */
      readonly banStarted?: { readonly until: number; readonly durationMs: number };
    })
  | (Assessment & {
      readonly kind: 'banned';
      readonly bannedUntil: number;
      readonly retryAfterSeconds: number;
      /** See `bindingUntil`. */
      readonly bindingUntil: number;
    })
  | (Assessment & {
      /** The headers of a response that counts nothing: not a refusal, even for a banned caller. */
      readonly kind: 'peek';
      /** Set while the caller is banned, so that the headers show the ban. */
      readonly bannedUntil?: number;
    });

/** The caller's windows at `now` under `policy`. */
export function assess(state: CallerState, now: number, policy: Policy): Assessment {
  return {
    plan: policy.name,
    at: now,
    minute: minuteStatus(state.minuteLog, now, policy.perMinute),
    day: dayStatus(state, now, policy.perDay),
  };
}

export type RateLimited = Extract<Verdict, { kind: 'rate-limited' }>;

/**
 * The refusal of a request the windows have no room for: the window that needs the longer wait (both
 * must have room), and that wait. A forced refusal, with room in both, names the window with the least
 * left and says one second. `banStartedUntil` (0: none) is the end of the ban this rejection
 * starts; then waiting the window's slot would not do, and `Retry-After` tells the ban's end instead.
 * Every store builds its refusals here, the Redis store from its script's numbers.
 */
export function rateLimited(assessment: Assessment, banStartedUntil: number): RateLimited {
  const { minute, day } = assessment;
  const window =
    minute.nextAdmitInMs === day.nextAdmitInMs
      ? bindingWindow(assessment)
      : minute.nextAdmitInMs > day.nextAdmitInMs
        ? 'minute'
        : 'day';
  const slotSeconds = Math.max(1, ceilSeconds(assessment[window].nextAdmitInMs));
  const refusal = {
    kind: 'rate-limited',
    ...assessment,
    window,
    limit: assessment[window].limit,
    retryAfterSeconds: slotSeconds,
  } as const;
  if (banStartedUntil === 0) return refusal;
  const durationMs = banStartedUntil - assessment.at;
  return {
    ...refusal,
    retryAfterSeconds: Math.max(slotSeconds, ceilSeconds(durationMs)),
    banStarted: { until: banStartedUntil, durationMs },
  };
}

export type Banned = Extract<Verdict, { kind: 'banned' }>;

/** The refusal of a banned caller: `Retry-After` tells the ban's end. Every store builds it here. */
export function banned(assessment: Assessment, bannedUntil: number, bindingUntil: number): Banned {
  // Starts with `kind`, like every verdict literal (see ./decision.ts).
  return {
    kind: 'banned',
    ...assessment,
    bannedUntil,
    retryAfterSeconds: ceilSeconds(bannedUntil - assessment.at),
    bindingUntil,
  };
}

/**
 * The minute in effect (`WindowStatus.windowMs`): until its oldest counted request leaves at
 * `oldestLeavesAt`, the whole minute when none is counted (`undefined`).
 */
export function minuteWindowMs(oldestLeavesAt: number | undefined, now: number): number {
  return oldestLeavesAt === undefined ? MINUTE_MS : oldestLeavesAt - now;
}

/** The window with the least left; on a tie, the day. */
export function bindingWindow(verdict: Assessment): WindowName {
  return verdict.minute.remaining < verdict.day.remaining ? 'minute' : 'day';
}

/**
 * Until when the window that binds now keeps binding while nothing is admitted, as during a ban: the
 * minute's count only falls as requests leave it, the day's stays until midnight. With it, a ban can
 * be answered again from the verdict alone, without the caller's state (see ./ban-shortcut.ts).
 * `log` is the minute log pruned at `a.at`.
 */
export function bindingUntil(log: MinuteLog, a: Assessment): number {
  if (bindingWindow(a) === 'day') return a.day.resetAt;
  // The minute binds while it holds more than k requests: k = its limit less what the day has left.
  const k = a.minute.limit - a.day.remaining;
  if (k < 0) return a.day.resetAt;
  // The (k+1)-th newest leaves last of those that keep it binding.
  return Math.min(a.day.resetAt, minuteRequestAt(log, minuteCount(log) - 1 - k)! + MINUTE_MS);
}

export function ceilSeconds(ms: number): number {
  return Math.ceil(ms / 1000);
}

function minuteStatus(log: MinuteLog, now: number, limit: number): WindowStatus {
  const live = minuteAfter(log, now - MINUTE_MS);
  const counted = minuteCount(live);
  const newest = minuteNewest(log);
  // Requests leave oldest first, so one more fits once the limit-th newest has left (or if there is none).
  const blocking = minuteRequestAt(live, counted - limit);
  const oldestLeavesAt = counted > 0 ? live.at[live.start]! + MINUTE_MS : undefined;
  return {
    limit,
    remaining: Math.max(0, limit - counted),
    resetAt: newest === undefined ? now : Math.max(now, newest + MINUTE_MS),
    nextAdmitInMs: blocking === undefined ? 0 : Math.max(0, blocking + MINUTE_MS - now),
    windowMs: minuteWindowMs(oldestLeavesAt, now),
  };
}

function dayStatus(state: CallerState, now: number, limit: number): WindowStatus {
  const today = dayOf(now);
  const remaining = Math.max(0, limit - (state.day === today ? state.dayCount : 0));
  const resetAt = (today + 1) * DAY_MS;
  return { limit, remaining, resetAt, nextAdmitInMs: remaining > 0 ? 0 : resetAt - now, windowMs: resetAt - now };
}
