import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULT_BAN_RULES } from '../../src/ratelimit/decision.js';
import { MemoryLimiterStore } from '../../src/ratelimit/memory-store.js';
import type { Policy } from '../../src/ratelimit/plans.js';
import { LOG_DEAD_PAIRS } from '../../src/ratelimit/redis-script.js';
import { readLimiterState } from '../../src/ratelimit/redis-state.js';
import { limiterKeys, RedisLimiterStore } from '../../src/ratelimit/redis-store.js';
import type { LimiterStore } from '../../src/ratelimit/store.js';
import { redisForTests, unlinkAll, unstamped } from '../helpers/redis.js';
import { runVectors } from './vectors.js';

/**
 * The Redis store's script is a mirror of the memory store's core (src/ratelimit/redis-script.ts):
 * the shared vectors, and random sequences of calls that both must answer alike.
 */
const redis = await redisForTests();
const url = redis?.url ?? '';
// Every key of this run starts with its own prefix, so runs never meet and the cleanup finds them all.
const prefix = `test:${randomUUID()}:`;
const NOON = Date.parse('2024-03-01T12:00:00.000Z');

describe.skipIf(!redis)('RedisLimiterStore against the memory store', () => {
  afterAll(async () => {
    const admin = new Redis(url);
    await unlinkAll(admin, prefix);
    await admin.quit();
  });

  const storeAt = (clock?: () => number, rules = DEFAULT_BAN_RULES) =>
    new RedisLimiterStore(new Redis(url), { clock, rules, prefix });

  function expectSame([memory, redis]: unknown[]): void {
    expect(unstamped(redis)).toEqual(memory);
  }

  describe('vectors', () => {
    runVectors((clock, rules) => storeAt(clock, rules));
  });

  type Op =
    | { hit: number; conn?: number; openedAgoMs?: number; forced?: boolean }
    | { advanceMs: number }
    | { peek: true }
    | { unban: true }
    | { banOf: true }
    | { signal: number }
    | { policy: Policy };
  const rules = { rejections: 3, withinMs: 10_000, firstBanMs: 5_000, maxBanMs: 20_000, escalationWindowMs: 60_000 };
  const others = [
    fc.record({ peek: fc.constant(true as const) }),
    fc.record({ unban: fc.constant(true as const) }),
    fc.record({ banOf: fc.constant(true as const) }),
    fc.record({ signal: fc.integer({ min: 0, max: 2 }) }),
  ];

  /**
   * Runs random sequences of `op` against the memory store and the Redis store, which must agree on every answer.
   * `together`: every call of a sequence is sent in one turn of the event loop, without waiting for the one before,
   * so that the Redis store decides them in runs of many calls of one caller (each with the clock as it stood when
   * the call was made); else each call waits for its answer, a run of its own.
   */
  async function differential(
    op: fc.Arbitrary<Op>,
    first: Policy,
    [minLength, maxLength]: [number, number],
    numRuns: number,
    together = false,
  ): Promise<void> {
    const start = fc.integer({ min: NOON, max: NOON + 86_400_000 });
    await fc.assert(
      fc.asyncProperty(start, fc.array(op, { minLength, maxLength }), async (startAt, ops) => {
        let now = startAt;
        let policy = first;
        let unbanSeq = 0;
        const caller = randomUUID();
        const stores: LimiterStore[] = [new MemoryLimiterStore({ clock: () => now, rules }), storeAt(() => now, rules)];
        const both = (call: (store: LimiterStore) => Promise<unknown>) => Promise.all(stores.map(call));
        // The answers sent together, compared once all are in.
        const sent: Promise<unknown[]>[] = [];
        const same = async (answers: Promise<unknown[]>) => {
          if (together) sent.push(answers);
          else expectSame(await answers);
        };
        try {
          for (const step of ops) {
            if ('advanceMs' in step) now += step.advanceMs;
            else if ('signal' in step) unbanSeq += step.signal;
            else if ('policy' in step) policy = step.policy;
            else if ('unban' in step) await same(both((s) => s.unban(caller)));
            else if ('banOf' in step) await same(both((s) => s.banOf(caller)));
            else if ('peek' in step) await same(both((s) => s.peek(caller, policy, unbanSeq)));
            else {
              // A sender of one of a few connections, some of another instance: the in-flight allowance.
              const sender =
                step.conn === undefined
                  ? undefined
                  : { real: now, conn: step.conn, openedAt: now - (step.openedAgoMs ?? 0), mark: 3 };
              const call = (s: LimiterStore) =>
                step.forced
                  ? s.refuse(caller, policy, unbanSeq, undefined, sender)
                  : s.hit(caller, policy, unbanSeq, undefined, sender);
              for (let i = 0; i < step.hit; i++) await same(both(call));
            }
          }
          for (const answers of sent) expectSame(await answers);
        } finally {
          await both((s) => s.close());
        }
      }),
      { numRuns },
    );
  }

  const variedOp: fc.Arbitrary<Op> = fc.oneof(
    { arbitrary: fc.record({ hit: fc.integer({ min: 1, max: 8 }) }), weight: 6 },
    {
      arbitrary: fc.record({
        hit: fc.integer({ min: 1, max: 4 }),
        conn: fc.constantFrom(1, 2, 3, 4, 5 * 2 ** 32 + 1),
        openedAgoMs: fc.integer({ min: 0, max: 60 }),
        forced: fc.boolean(),
      }),
      weight: 4,
    },
    { arbitrary: fc.record({ advanceMs: fc.integer({ min: 0, max: 60 }) }), weight: 2 },
    {
      arbitrary: fc.record({
        advanceMs: fc.oneof(fc.integer({ min: 0, max: 70_000 }), fc.constantFrom(9_999, 10_000, 60_000, 86_400_000)),
      }),
      weight: 4,
    },
    ...others,
    fc.record({
      policy: fc.record({
        name: fc.constant('enterprise' as const),
        perMinute: fc.integer({ min: 0, max: 4 }),
        perDay: fc.integer({ min: 1, max: 9 }),
      }),
    }),
  );

  it('gives exactly the memory store’s verdicts for random sequences of calls', async () => {
    await differential(variedOp, { name: 'enterprise', perMinute: 2, perDay: 5 }, [0, 40], 150);
  });

  it('gives them too when a whole sequence is sent in one turn: runs of one caller’s calls, bans and unbans among them', async () => {
    await differential(variedOp, { name: 'enterprise', perMinute: 2, perDay: 5 }, [0, 80], 150, true);
  });

  it('agrees with the memory store over a minute log of many milliseconds, several requests in each, as it fills, drains and is downgraded, call by call and in runs', async () => {
    const op: fc.Arbitrary<Op> = fc.oneof(
      { arbitrary: fc.record({ hit: fc.integer({ min: 1, max: 6 }) }), weight: 10 },
      { arbitrary: fc.record({ advanceMs: fc.integer({ min: 0, max: 40 }) }), weight: 8 },
      {
        arbitrary: fc.record({
          advanceMs: fc.oneof(fc.integer({ min: 500, max: 30_000 }), fc.constantFrom(59_999, 60_000)),
        }),
        weight: 1,
      },
      ...others,
      {
        arbitrary: fc.record({
          policy: fc.record({
            name: fc.constant('enterprise' as const),
            perMinute: fc.integer({ min: 0, max: 120 }),
            perDay: fc.integer({ min: 50, max: 100_000 }),
          }),
        }),
        weight: 3,
      },
    );
    await differential(op, { name: 'enterprise', perMinute: 100, perDay: 100_000 }, [100, 150], 40);
    await differential(op, { name: 'enterprise', perMinute: 100, perDay: 100_000 }, [100, 150], 40, true);
  });

  it('forgets a millisecond of the minute log exactly when it leaves, however many leave at once, as the memory store does', async () => {
    const policy: Policy = { name: 'enterprise', perMinute: 1_000, perDay: 100_000 };
    for (const leaving of [1, 2, 3, 5, 8, 13, 21, 34]) {
      let now = NOON;
      const caller = randomUUID();
      const stores: LimiterStore[] = [new MemoryLimiterStore({ clock: () => now, rules }), storeAt(() => now, rules)];
      const both = (call: (store: LimiterStore) => Promise<unknown>) => Promise.all(stores.map(call));
      // 40 milliseconds of 3 requests each, then the clock at the instant the `leaving` oldest leave.
      for (let ms = 0; ms < 40; ms++, now++)
        for (let i = 0; i < 3; i++) expectSame(await both((s) => s.hit(caller, policy)));
      now = NOON + 60_000 + leaving - 1;
      expectSame(await both((s) => s.peek(caller, policy)));
      expectSame(await both((s) => s.hit(caller, policy)));
      expectSame(await both((s) => s.hit(caller, { ...policy, perMinute: 100 })));
      await both((s) => s.close());
    }
  });
  it('keeps at most LOG_DEAD_PAIRS milliseconds that left at the list’s head as a busy caller’s leave one by one, and answers as the memory store', async () => {
    const admin = new Redis(url);
    const policy: Policy = { name: 'enterprise', perMinute: 300, perDay: 100_000 };
    let now = NOON;
    const caller = randomUUID();
    const [log, , state] = limiterKeys(prefix, caller);
    const stores: LimiterStore[] = [new MemoryLimiterStore({ clock: () => now, rules }), storeAt(() => now, rules)];
    const both = (call: (store: LimiterStore) => Promise<unknown>) => Promise.all(stores.map(call));
    for (let ms = 0; ms < 200; ms++, now++) expectSame(await both((s) => s.hit(caller, policy)));
    // From the first leaving on, one millisecond leaves as one comes: the head moves, the list is cut now and then.
    now = NOON + 60_000;
    let longest = 0;
    for (let step = 0; step < 3 * LOG_DEAD_PAIRS; step++, now++) {
      expectSame(await both((s) => s.hit(caller, policy)));
      // At a lower limit the refusal names the request whose leaving lets one in: found past the head's dead pairs.
      expectSame(await both((s) => s.peek(caller, { ...policy, perMinute: 150 })));
      const { mhead } = readLimiterState((await admin.getBuffer(state))!);
      longest = Math.max(longest, mhead);
      expect((await admin.llen(log)) / 2 - mhead).toBe(200);
      if (step === LOG_DEAD_PAIRS + 10) {
        // As a script from before mhead leaves it: the pairs that left cut off, mhead not told.
        expect(mhead).toBeGreaterThan(0);
        await admin.ltrim(log, 2 * mhead, -1);
      }
    }
    expect(longest).toBe(LOG_DEAD_PAIRS - 1);
    await both((s) => s.close());
    await admin.quit();
  });
});
