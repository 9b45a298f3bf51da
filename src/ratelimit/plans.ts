/**
 * The plans and their numbers. This is the only place a plan's limits are written down: the limiter,
 * the rate-limit headers, the OpenAPI document and the README table all read them from here.
 */
export const PLAN_NAMES = ['free', 'pro', 'business', 'enterprise'] as const;
export type PlanName = (typeof PLAN_NAMES)[number];

/**
 * The most requests a window may allow (an enterprise key's own numbers):
 * what the stores' integer column holds (PostgreSQL's `integer`).
 */
export const MAX_LIMIT = 2_147_483_647;

/** The limits in force for one caller. `name` is what the 429 body reports as `plan`. */
export interface Policy {
  readonly name: PlanName | 'anonymous' | 'uncounted';
  readonly perMinute: number;
  readonly perDay: number;
  /** False for a throttle whose refusals never lead to a ban (the uncounted policy). */
  readonly bans?: false;
}

/** Fixed plans. Enterprise has no fixed numbers: each enterprise key carries its own. */
export const PLAN_LIMITS: Readonly<Record<Exclude<PlanName, 'enterprise'>, { perMinute: number; perDay: number }>> = {
  free: { perMinute: 60, perDay: 1_000 },
  pro: { perMinute: 300, perDay: 10_000 },
  business: { perMinute: 1_000, perDay: 100_000 },
};

/** Requests without a valid key are limited per client address with the free plan's numbers. */
export const ANONYMOUS_POLICY: Policy = { name: 'anonymous', ...PLAN_LIMITS.free };

/**
 * The paths that count toward no plan (the docs, the document, the problem pages, `/usage`, a test key's
 * clock, reset and card…) are still throttled, generously, so that nobody can send them without limit:
 * per key where a valid key is sent (one CI machine driving many test keys spends no shared allowance,
 * and one key's flood never refuses another key), per address otherwise. Its refusal names this policy
 * (problem type `uncounted-throttled`) and is never a ban (docs/rate-limits.md#uncounted-paths).
 */
export const UNCOUNTED_POLICY: Policy = { name: 'uncounted', perMinute: 600, perDay: 100_000, bans: false };

export function isPlanName(value: string): value is PlanName {
  return (PLAN_NAMES as readonly string[]).includes(value);
}

/**
 * The policy of a key. Enterprise keys must carry their own numbers. A key of another plan carries numbers
 * only when it is a child test key given lower limits than its plan's (test-mode/key-tree.ts): they apply
 * where lower, so that no number above the plan's is ever in force (a plan change clears them).
 */
export function policyFor(plan: PlanName, custom?: { perMinute: number | null; perDay: number | null }): Policy {
  if (plan === 'enterprise') {
    if (!custom?.perMinute || !custom?.perDay) {
      throw new Error('an enterprise key needs its own per-minute and per-day limits');
    }
    return { name: plan, perMinute: custom.perMinute, perDay: custom.perDay };
  }
  const fixed = FIXED_POLICIES[plan];
  if (!custom?.perMinute && !custom?.perDay) return fixed;
  return {
    name: plan,
    perMinute: Math.min(fixed.perMinute, custom.perMinute ?? fixed.perMinute),
    perDay: Math.min(fixed.perDay, custom.perDay ?? fixed.perDay),
  };
}

/** Built once: a key of a fixed plan shares its plan's policy. */
const FIXED_POLICIES = Object.fromEntries(
  Object.entries(PLAN_LIMITS).map(([name, limits]) => [name, Object.freeze({ name, ...limits })]),
) as Record<keyof typeof PLAN_LIMITS, Policy>;
