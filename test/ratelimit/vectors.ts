/**
 * Runs test/ratelimit/vectors.json against any LimiterStore, so that every store (memory today,
 * Redis later) is held to the same cases. A case is
 *
 *   { name, policy: {name, perMinute, perDay}, rules?: Partial<BanRules>, start: ISO instant, steps: [...] }
 *
 * and its steps run in order against one caller (`key:test` unless a step names another):
 *
 *   { "advanceMs": n }                                   move the fake clock forward
 *   { "hit": n, "everyMs"?: m, "caller"?: id, "expect": E } n requests, m ms apart; each must meet E
 *   { "refuse": n, "caller"?: id, "expect": E }           n forced refusals (a test key's fault=429)
 *   a hit or refuse may name its sender (the in-flight allowance, src/http/in-flight.ts):
 *   "conn": its connection's id, "openedAgoMs": how long it has been open, "mark": the newest connection
 *   of its instance (default: the connection itself); without "conn", no sender (no allowance)
 *   { "peek": true, "caller"?: id, "expect": E }         headers without counting
 *   { "unbanSignal": n }                                 the unban counter the following requests carry
 *   { "unban": true, "caller"?: id }
 *   { "setPolicy": {name, perMinute, perDay} }            the policy of the following requests
 *   { "banOf": null | { "level": n, "endsInMs": m }, "caller"?: id }
 *
 * An expectation E names `kind` and optionally `window`, `limit`, `retryAfter` (seconds) and
 * `headers` (the exact, complete set). `banStartedMs` is always checked: absent means that the
 * request must not start a ban.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import type { Clock } from '../../src/clock.js';
import { type BanRules, DEFAULT_BAN_RULES, type Sender } from '../../src/ratelimit/decision.js';
import { rateLimitHeaders } from '../../src/ratelimit/headers.js';
import type { Policy } from '../../src/ratelimit/plans.js';
import type { LimiterStore } from '../../src/ratelimit/store.js';
import type { Verdict, WindowName } from '../../src/ratelimit/verdict.js';

export type StoreFactory = (clock: Clock, rules: BanRules) => LimiterStore | Promise<LimiterStore>;

interface Expectation {
  kind: Verdict['kind'];
  window?: WindowName;
  limit?: number;
  retryAfter?: number;
  banStartedMs?: number;
  headers?: Record<string, string>;
}

type Step =
  | { advanceMs: number }
  | ({ hit: number; everyMs?: number; caller?: string; expect: Expectation } & Sent)
  | ({ refuse: number; caller?: string; expect: Expectation } & Sent)
  | { peek: true; caller?: string; expect: Expectation }
  | { unban: true; caller?: string }
  | { unbanSignal: number }
  | { setPolicy: Policy }
  | { banOf: { level: number; endsInMs: number } | null; caller?: string };

/** Where a request came from: its connection, how long open, and its instance's newest connection. */
interface Sent {
  conn?: number;
  openedAgoMs?: number;
  mark?: number;
}

function senderOf(step: Sent, now: number): Sender | undefined {
  if (step.conn === undefined) return undefined;
  return { real: now, conn: step.conn, openedAt: now - (step.openedAgoMs ?? 0), mark: step.mark ?? step.conn };
}

interface VectorCase {
  name: string;
  policy: Policy;
  rules?: Partial<BanRules>;
  start: string;
  steps: Step[];
}

const VECTORS: readonly VectorCase[] = (
  JSON.parse(readFileSync(new URL('./vectors.json', import.meta.url), 'utf8')) as { cases: VectorCase[] }
).cases;

/** Registers one test per case; each gets a fresh store reading a fake clock that only the steps move. */
export function runVectors(makeStore: StoreFactory): void {
  // Callers are unique per run and case, so a shared store (a Redis server) needs no flushing.
  const run = randomUUID();
  VECTORS.forEach((vector, index) => {
    it(vector.name, async () => {
      let now = Date.parse(vector.start);
      let policy = vector.policy;
      let unbanSeq = 0;
      const store = await makeStore(() => now, { ...DEFAULT_BAN_RULES, ...vector.rules });
      const callerOf = (step: { caller?: string }) => `${run}/${index}/${step.caller ?? 'key:test'}`;
      try {
        for (const [i, step] of vector.steps.entries()) {
          const where = () => `step ${i + 1} at ${new Date(now).toISOString()}`;
          if ('advanceMs' in step) {
            now += step.advanceMs;
          } else if ('hit' in step) {
            for (let n = 1; n <= step.hit; n++) {
              if (n > 1) now += step.everyMs ?? 0;
              const verdict = await store.hit(callerOf(step), policy, unbanSeq, undefined, senderOf(step, now));
              expect(observe(verdict, step.expect), `${where()}, request ${n} of ${step.hit}`).toEqual(step.expect);
            }
          } else if ('refuse' in step) {
            for (let n = 1; n <= step.refuse; n++) {
              const verdict = await store.refuse(callerOf(step), policy, unbanSeq, undefined, senderOf(step, now));
              expect(observe(verdict, step.expect), `${where()}, forced refusal ${n} of ${step.refuse}`).toEqual(
                step.expect,
              );
            }
          } else if ('peek' in step) {
            expect(observe(await store.peek(callerOf(step), policy, unbanSeq), step.expect), where()).toEqual(
              step.expect,
            );
          } else if ('unban' in step) {
            await store.unban(callerOf(step));
          } else if ('unbanSignal' in step) {
            unbanSeq = step.unbanSignal;
          } else if ('setPolicy' in step) {
            policy = step.setPolicy;
          } else if ('banOf' in step) {
            const expected = step.banOf && { until: now + step.banOf.endsInMs, level: step.banOf.level };
            expect(await store.banOf(callerOf(step), unbanSeq), where()).toEqual(expected);
          } else {
            throw new Error(`${where()}: unknown step ${JSON.stringify(step)}`);
          }
        }
      } finally {
        await store.close();
      }
    });
  });
}

/** The verdict in the vocabulary of the expectation, limited to what it names (plus `banStartedMs`). */
function observe(verdict: Verdict, expectation: Expectation): Partial<Expectation> {
  const banStarted = verdict.kind === 'rate-limited' ? verdict.banStarted : undefined;
  if (banStarted) expect(banStarted.until - verdict.at).toBe(banStarted.durationMs);
  const full: Expectation = {
    kind: verdict.kind,
    window: verdict.kind === 'rate-limited' ? verdict.window : undefined,
    limit: verdict.kind === 'rate-limited' ? verdict.limit : undefined,
    retryAfter: verdict.kind === 'rate-limited' || verdict.kind === 'banned' ? verdict.retryAfterSeconds : undefined,
    banStartedMs: banStarted?.durationMs,
    headers: rateLimitHeaders(verdict),
  };
  const named = new Set([...Object.keys(expectation), 'banStartedMs']);
  return Object.fromEntries(Object.entries(full).filter(([key]) => named.has(key)));
}
