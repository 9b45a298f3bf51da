import type { Policy } from './plans.js';
import { type Assessment, banned, minuteWindowMs, rateLimited, type Verdict } from './verdict.js';

/**
 * How the Redis store (./redis-store.ts) reads what the script (./redis-script.ts) decided: its reply to `hit`
 * and `peek`, numbers in a fixed order, made the verdict the memory store would have given.
 */

/** What the script answers to `hit` and `peek` (see ./redis-script.ts). */
export type Reply = [
  kind: Verdict['kind'],
  at: number,
  minuteRemaining: number,
  minuteResetAt: number,
  minuteNextAdmitInMs: number,
  dayRemaining: number,
  dayResetAt: number,
  dayNextAdmitInMs: number,
  bannedUntil: number,
  banStartedUntil: number,
  bindingUntil: number,
  minuteOldestLeavesAt: number,
  stamp?: string | null,
];

/**
 * The verdict shapes of ./decision.ts, built by the same functions of ./verdict.ts from the numbers the script decided.
 */
export function verdictOf(reply: Reply, policy: Policy): Verdict {
  const [
    kind,
    at,
    minuteRemaining,
    minuteResetAt,
    minuteNext,
    dayRemaining,
    dayResetAt,
    dayNext,
    bannedUntil,
    banStartedUntil,
    bindingUntil,
    oldestLeavesAt,
    stamp,
  ] = reply;
  const assessment: Assessment = {
    plan: policy.name,
    at,
    stamp: stamp ?? undefined,
    minute: {
      limit: policy.perMinute,
      remaining: minuteRemaining,
      resetAt: minuteResetAt,
      nextAdmitInMs: minuteNext,
      windowMs: minuteWindowMs(oldestLeavesAt > 0 ? oldestLeavesAt : undefined, at),
    },
    day: {
      limit: policy.perDay,
      remaining: dayRemaining,
      resetAt: dayResetAt,
      nextAdmitInMs: dayNext,
      windowMs: dayResetAt - at,
    },
  };
  switch (kind) {
    case 'admitted':
      return { kind, ...assessment };
    case 'banned':
      return banned(assessment, bannedUntil, bindingUntil);
    case 'peek':
      return bannedUntil > 0 ? { kind, ...assessment, bannedUntil } : { kind, ...assessment };
    case 'rate-limited':
      return rateLimited(assessment, banStartedUntil);
  }
}
