import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DEFAULT_BAN_RULES, decide, peek, unban } from '../../src/ratelimit/decision.js';
import { LIMIT_HEADER, REMAINING_HEADER, rateLimitHeaders } from '../../src/ratelimit/headers.js';
import { RETRY_AFTER_HEADER } from '../../src/http/responses.js';
import { MAX_RETRY_AFTER_SECONDS } from '../../src/http/schemas.js';
import { logSize } from '../../src/ratelimit/instant-log.js';
import { minuteCount, minuteInstants } from '../../src/ratelimit/minute-log.js';
import { type Policy, policyFor } from '../../src/ratelimit/plans.js';
import { type CallerState, DAY_MS, dayOf, MINUTE_MS } from '../../src/ratelimit/state.js';
import type { Verdict } from '../../src/ratelimit/verdict.js';

const rules = DEFAULT_BAN_RULES;
const NOON = Date.parse('2024-03-01T12:00:00.000Z');

/** Requests arrive in groups: wait, then `count` requests `everyMs` apart. */
interface Arrival {
  waitMs: number | 'retry-after';
  count: number;
  everyMs: number;
}

function arrivals(policy: Policy, maxGroups: number): fc.Arbitrary<Arrival[]> {
  const steadyMs = Math.ceil(MINUTE_MS / policy.perMinute);
  const wait = fc.oneof(
    fc.constantFrom(0, 1, 999, 1_000, 1_001, 59_999, 60_000, 60_001, DAY_MS - 1, DAY_MS, DAY_MS + 1),
    fc.integer({ min: 0, max: 600_000 }),
    fc.integer({ min: 0, max: 2 * DAY_MS }),
    fc.constant('retry-after' as const),
  );
  const group = fc.record({
    waitMs: wait,
    // Enough to fill the minute and then collect a ban's worth of rejections at once.
    count: fc.integer({ min: 1, max: policy.perMinute + Math.max(Math.ceil(policy.perMinute / 2), rules.rejections) }),
    everyMs: fc.oneof(fc.constant(0), fc.constant(steadyMs), fc.integer({ min: 1, max: 2_000 })),
  });
  return fc.array(group, { minLength: 1, maxLength: maxGroups });
}

/** Anywhere in a day, often in its last two minutes so that runs cross midnight. */
const startInstant = fc
  .oneof(fc.integer({ min: 0, max: DAY_MS - 1 }), fc.integer({ min: DAY_MS - 120_000, max: DAY_MS - 1 }))
  .map((offset) => NOON - (NOON % DAY_MS) + offset);

/**
 * Feeds the arrivals to `decide` and checks every verdict against a plain model of docs/rate-limits.md's rules:
 * admitted exactly when both windows have room, only admitted requests counted, bans exactly after
 * 10 rejections within 60 s and of the escalated length, Retry-After honoured. Returns the admitted instants.
 */
function simulate(policy: Policy, start: number, groups: Arrival[]): number[] {
  const admitted: number[] = [];
  const perDay = new Map<number, number>();
  let firstLive = 0;
  let strikes: number[] = [];
  // When the latest 429's wait ends: a 429 before it is a strike.
  let waitEnd = 0;
  let ban: { until: number; level: number } | undefined;
  let state: CallerState | undefined;
  let retryAfterMs = 0;
  let now = start;
  for (const { waitMs, count, everyMs } of groups) {
    now += waitMs === 'retry-after' ? retryAfterMs : waitMs;
    for (let i = 0; i < count; i++) {
      if (i > 0) now += everyMs;
      while (firstLive < admitted.length && now - admitted[firstLive]! >= MINUTE_MS) firstLive++;
      const today = perDay.get(dayOf(now)) ?? 0;
      const { verdict, state: next } = decide(state, now, policy, rules);

      const banned = ban !== undefined && now < ban.until;
      const fits = admitted.length - firstLive < policy.perMinute && today < policy.perDay;
      expect(verdict.kind).toBe(banned ? 'banned' : fits ? 'admitted' : 'rate-limited');
      if (verdict.kind === 'admitted') {
        admitted.push(now);
        perDay.set(dayOf(now), today + 1);
      }
      if (verdict.kind === 'rate-limited') {
        // Only a 429 for a request sent before the previous 429's wait ended is a strike.
        const strike = now < waitEnd;
        waitEnd = now + verdict.retryAfterSeconds * 1000;
        if (strike) strikes = [...strikes.filter((t) => now - t < rules.withinMs), now];
        const expectedBan = strike && strikes.length >= rules.rejections ? startBan(now, ban) : undefined;
        expect(verdict.banStarted).toEqual(
          expectedBan && { until: expectedBan.until, durationMs: expectedBan.until - now },
        );
        if (expectedBan) [ban, strikes, waitEnd] = [expectedBan, [], 0];
      }

      expect(sameNumbers(minuteInstants(next.minuteLog), admitted.slice(firstLive))).toBe(true);
      expect(next.dayCount).toBe(perDay.get(dayOf(now)) ?? 0);
      expect(minuteCount(next.minuteLog)).toBeLessThanOrEqual(policy.perMinute);
      expect(logSize(next.rejections)).toBeLessThan(rules.rejections);
      const headers = rateLimitHeaders(verdict);
      expect(Number(headers[REMAINING_HEADER])).toBeGreaterThanOrEqual(0);
      expect(Number(headers[REMAINING_HEADER])).toBeLessThanOrEqual(Number(headers[LIMIT_HEADER]));

      retryAfterMs = expectRetryAfterHonoured(verdict, next, policy);
      state = next;
    }
  }
  return admitted;
}

/** Retry-After is whole seconds ≥ 1, and retrying after exactly that long is admitted (or no longer banned). */
function expectRetryAfterHonoured(verdict: Verdict, next: CallerState, policy: Policy): number {
  if (verdict.kind !== 'rate-limited' && verdict.kind !== 'banned') return 0;
  expect(Number.isInteger(verdict.retryAfterSeconds) && verdict.retryAfterSeconds >= 1).toBe(true);
  const retryAfterMs = verdict.retryAfterSeconds * 1000;
  const retried = decide(next, verdict.at + retryAfterMs, policy, rules).verdict.kind;
  if (verdict.kind === 'banned') expect(retried).not.toBe('banned');
  // Every 429 of a limit, the one that starts a ban included (its Retry-After is the ban's end).
  else expect(retried).toBe('admitted');
  return retryAfterMs;
}

function startBan(now: number, previous: { until: number; level: number } | undefined) {
  const level = previous && now - previous.until < rules.escalationWindowMs ? previous.level + 1 : 1;
  return { until: now + Math.min(rules.firstBanMs * 2 ** (level - 1), rules.maxBanMs), level };
}

function sameNumbers(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((t, i) => t === b[i]);
}

/** Every 60-second span that starts at an admitted request (the fullest spans start at one). */
function busiestMinute(admitted: readonly number[]): number {
  let busiest = 0;
  for (let i = 0, j = 0; i < admitted.length; i++) {
    while (j < admitted.length && admitted[j]! - admitted[i]! < MINUTE_MS) j++;
    busiest = Math.max(busiest, j - i);
  }
  return busiest;
}

function busiestDay(admitted: readonly number[]): number {
  const perDay = new Map<number, number>();
  for (const t of admitted) perDay.set(dayOf(t), (perDay.get(dayOf(t)) ?? 0) + 1);
  return Math.max(0, ...perDay.values());
}

const enterprise = fc
  .record({ perMinute: fc.integer({ min: 1, max: 20 }), perDay: fc.integer({ min: 1, max: 120 }) })
  .map((custom) => policyFor('enterprise', custom));

describe.each([
  { plan: 'free', policies: fc.constant(policyFor('free')), groups: 40, runs: 60 },
  { plan: 'pro', policies: fc.constant(policyFor('pro')), groups: 20, runs: 20 },
  { plan: 'business', policies: fc.constant(policyFor('business')), groups: 10, runs: 6 },
  { plan: 'enterprise (random numbers)', policies: enterprise, groups: 60, runs: 150 },
])('decide, $plan plan', ({ policies, groups, runs }) => {
  it('follows the contract for random arrivals, and no 60 s span or UTC day exceeds the limits', () => {
    const scenario = policies.chain((policy) => fc.tuple(fc.constant(policy), startInstant, arrivals(policy, groups)));
    fc.assert(
      fc.property(scenario, ([policy, start, groups]) => {
        const admitted = simulate(policy, start, groups);
        expect(busiestMinute(admitted)).toBeLessThanOrEqual(policy.perMinute);
        expect(busiestDay(admitted)).toBeLessThanOrEqual(policy.perDay);
      }),
      { numRuns: runs },
    );
  });
});

describe('decide, examples', () => {
  it('never says to wait longer than the documents declare Retry-After may: the day window is the longest wait', () => {
    expect(MAX_RETRY_AFTER_SECONDS).toBe(DAY_MS / 1000);
  });

  const free = policyFor('free');
  const burst = (policy: Policy, count: number, now = NOON) => {
    let state: CallerState | undefined;
    for (let i = 0; i < count; i++) state = decide(state, now, policy, rules).state;
    return state!;
  };

  it('keeps counting what was counted across a downgrade and an upgrade back within the minute', () => {
    const business = policyFor('business');
    const state = burst(business, 500);
    const { verdict, state: after } = decide(state, NOON + 1, free, rules);
    expect(verdict).toMatchObject({ kind: 'rate-limited', window: 'minute', limit: 60, retryAfterSeconds: 60 });
    expect(after.dayCount).toBe(500);
    const back = decide(after, NOON + 2, business, rules);
    expect(back.verdict).toMatchObject({ kind: 'admitted', minute: { remaining: 499 } });
    // The log never outgrows the largest limit in force within the minute, and empties as it passes.
    expect(minuteCount(back.state.minuteLog)).toBeLessThanOrEqual(business.perMinute);
    expect(minuteCount(decide(back.state, NOON + 60_002, free, rules).state.minuteLog)).toBe(1);
  });

  it('decides the same on a state that went through JSON, as a Redis store would keep it', () => {
    const state = burst(free, 60);
    const roundTripped = JSON.parse(JSON.stringify(state)) as CallerState;
    expect(decide(roundTripped, NOON + 500, free, rules)).toEqual(decide(state, NOON + 500, free, rules));
  });

  it('peek shows a ban without counting and without refusing', () => {
    let state = burst(free, 60);
    // The first 429 follows no other; the next ten come before its wait ended.
    for (let i = 0; i < 11; i++) state = decide(state, NOON, free, rules).state;
    const seen = peek(state, NOON + 1_000, free);
    expect(seen).toMatchObject({ kind: 'peek', bannedUntil: NOON + 60_000 });
    expect(rateLimitHeaders(seen)).not.toHaveProperty(RETRY_AFTER_HEADER);
  });

  it('unban lifts the ban, forgives the strikes and keeps the escalation level', () => {
    let state = burst(free, 60);
    for (let i = 0; i < 11; i++) state = decide(state, NOON, free, rules).state;
    const lifted = unban(state);
    expect(lifted).toMatchObject({ bannedUntil: 0, banLevel: 1, minuteLog: state.minuteLog });
    expect(logSize(lifted.rejections)).toBe(0);
    expect(decide(lifted, NOON + 1, free, rules).verdict.kind).toBe('rate-limited');
  });
});
