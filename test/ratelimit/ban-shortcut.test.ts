import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { BanShortcut } from '../../src/ratelimit/ban-shortcut.js';
import { DEFAULT_BAN_RULES } from '../../src/ratelimit/decision.js';
import { rateLimitHeaders } from '../../src/ratelimit/headers.js';
import { MemoryLimiterStore } from '../../src/ratelimit/memory-store.js';
import type { Policy } from '../../src/ratelimit/plans.js';
import { RedisLimiterStore } from '../../src/ratelimit/redis-store.js';
import type { Verdict } from '../../src/ratelimit/verdict.js';
import { redisForTests } from '../helpers/redis.js';
import { runVectors } from './vectors.js';

const redis = await redisForTests();
const prefix = `test:${randomUUID()}:`;
const NOON = Date.parse('2024-03-01T12:00:00.000Z');
const free: Policy = { name: 'free', perMinute: 60, perDay: 1000 };

describe('BanShortcut over the memory store', () => {
  runVectors((clock, rules) => new BanShortcut(new MemoryLimiterStore({ clock, rules }), { clock }));
});

describe.skipIf(!redis)('BanShortcut over the Redis store', () => {
  const clients: Redis[] = [];
  afterAll(async () => {
    const admin = new Redis(redis!.url);
    const keys = await admin.keys(`${prefix}*`);
    if (keys.length > 0) await admin.unlink(...keys);
    await admin.quit();
  });
  runVectors((clock, rules) => {
    const client = new Redis(redis!.url);
    clients.push(client);
    return new BanShortcut(new RedisLimiterStore(client, { clock, rules, prefix }), { clock });
  });
});

/** What a client sees of a verdict. */
const seen = (verdict: Verdict) => ({ kind: verdict.kind, headers: rateLimitHeaders(verdict) });

describe('BanShortcut', () => {
  it('refuses a banned caller without asking the store until the ban ends, then asks again', async () => {
    let now = NOON;
    const store = new MemoryLimiterStore({ clock: () => now });
    // Asked either way: a store in memory answers at once (`hitNow`), Redis through `hit`.
    const [hit, hitNow] = [vi.spyOn(store, 'hit'), vi.spyOn(store, 'hitNow')];
    const asked = () => hit.mock.calls.length + hitNow.mock.calls.length;
    const shortcut = new BanShortcut(store, { clock: () => now });
    for (let i = 0; i < 71; i++) await shortcut.hit('key:k', free);
    // The 71st request started a 60 s ban (the first 429 follows no other, so the next ten count); the
    // store tells the first request of the ban its end, and what follows is answered from memory, to its
    // last 50 ms.
    now += 1_000;
    expect((await shortcut.hit('key:k', free)).kind).toBe('banned');
    expect(asked()).toBe(72);
    for (let i = 0; i < 58; i++) {
      now += 1_000;
      expect((await shortcut.hit('key:k', free)).kind).toBe('banned');
    }
    expect(asked()).toBe(72);
    now += 990;
    expect((await shortcut.hit('key:k', free)).kind).toBe('banned');
    expect(asked()).toBe(73);
    now += 10;
    expect((await shortcut.hit('key:k', free)).kind).toBe('admitted');
    await shortcut.close();
  });

  it('asks the store again at once after an unban, through it or signalled on the key, and after a plan change', async () => {
    const now = NOON;
    const store = new MemoryLimiterStore({ clock: () => now });
    const shortcut = new BanShortcut(store, { clock: () => now });
    const ban = async (caller: string) => {
      for (let i = 0; i < 71; i++) await shortcut.hit(caller, free);
      expect((await shortcut.hit(caller, free)).kind).toBe('banned');
    };
    await ban('key:a');
    await shortcut.unban('key:a');
    expect((await shortcut.hit('key:a', free)).kind).toBe('rate-limited');
    await ban('key:b');
    expect((await shortcut.hit('key:b', free, 1)).kind).toBe('rate-limited');
    await ban('key:c');
    // Still banned (a ban is the caller's), but the headers tell the new plan's numbers.
    const replanned = await shortcut.hit('key:c', { name: 'pro', perMinute: 300, perDay: 10_000 });
    expect(replanned.kind).toBe('banned');
    expect(rateLimitHeaders(replanned)['RateLimit-Policy']).toBe('"minute";q=300;w=60, "day";q=10000;w=86400');
    await shortcut.close();
  });

  it('answers exactly what the store alone answers, for random sequences that cross bans, midnights and binding windows', async () => {
    const rules = { rejections: 3, withinMs: 10_000, firstBanMs: 5_000, maxBanMs: 20_000, escalationWindowMs: 60_000 };
    const op = fc.oneof(
      {
        arbitrary: fc.record({ hit: fc.integer({ min: 1, max: 8 }), everyMs: fc.integer({ min: 0, max: 3_000 }) }),
        weight: 8,
      },
      {
        arbitrary: fc.record({
          advanceMs: fc.oneof(fc.integer({ min: 0, max: 70_000 }), fc.constantFrom(4_950, 5_000, 60_000, 86_400_000)),
        }),
        weight: 3,
      },
      fc.record({ signal: fc.integer({ min: 0, max: 2 }) }),
      fc.record({
        policy: fc.record({
          name: fc.constant('enterprise' as const),
          perMinute: fc.integer({ min: 1, max: 6 }),
          perDay: fc.integer({ min: 1, max: 9 }),
        }),
      }),
    );
    const start = fc.integer({ min: NOON, max: NOON + 86_400_000 });
    await fc.assert(
      fc.asyncProperty(start, fc.array(op, { maxLength: 40 }), async (startAt, ops) => {
        let now = startAt;
        let policy: Policy = { name: 'enterprise', perMinute: 3, perDay: 6 };
        let unbanSeq = 0;
        const alone = new MemoryLimiterStore({ clock: () => now, rules });
        const shortcut = new BanShortcut(new MemoryLimiterStore({ clock: () => now, rules }), { clock: () => now });
        for (const step of ops) {
          if ('advanceMs' in step) now += step.advanceMs;
          else if ('signal' in step) unbanSeq = Math.max(unbanSeq, step.signal);
          else if ('policy' in step) policy = step.policy;
          else {
            for (let i = 0; i < step.hit; i++) {
              now += i === 0 ? 0 : step.everyMs;
              expect(seen(await shortcut.hit('key:k', policy, unbanSeq))).toEqual(
                seen(await alone.hit('key:k', policy, unbanSeq)),
              );
            }
          }
        }
        await Promise.all([alone.close(), shortcut.close()]);
      }),
      { numRuns: 300 },
    );
  });

  it('holds banned callers only', async () => {
    let now = NOON;
    const shortcut = new BanShortcut(new MemoryLimiterStore({ clock: () => now, rules: DEFAULT_BAN_RULES }), {
      clock: () => now,
      max: 2,
    });
    for (let i = 0; i < 1_000; i++) await shortcut.hit(`ip:10.0.${i >> 8}.${i & 255}`, free);
    for (const caller of ['key:a', 'key:b', 'key:c']) for (let i = 0; i < 71; i++) await shortcut.hit(caller, free);
    // Two are held; the third is refused by the store itself, exactly the same.
    for (const caller of ['key:a', 'key:b', 'key:c']) expect((await shortcut.hit(caller, free)).kind).toBe('banned');
    now += 61_000;
    for (const caller of ['key:a', 'key:b', 'key:c']) expect((await shortcut.hit(caller, free)).kind).toBe('admitted');
    await shortcut.close();
  });
});
