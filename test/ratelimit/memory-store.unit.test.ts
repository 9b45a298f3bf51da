import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { MemoryLimiterStore } from '../../src/ratelimit/memory-store.js';
import type { Policy } from '../../src/ratelimit/plans.js';
import type { KeyClock } from '../../src/clock.js';
import type { Sender } from '../../src/ratelimit/decision.js';
import { runVectors } from './vectors.js';

describe('MemoryLimiterStore: vectors', () => {
  runVectors((clock, rules) => new MemoryLimiterStore({ clock, rules }));
});

/** Forgetting idle callers must be invisible: the same vectors pass with a sweep before every call. */
class SweepingStore extends MemoryLimiterStore {
  override async hit(caller: string, policy: Policy, unbanSeq?: number, clock?: KeyClock, sender?: Sender) {
    this.sweep();
    return super.hit(caller, policy, unbanSeq, clock, sender);
  }
  override async refuse(caller: string, policy: Policy, unbanSeq?: number, clock?: KeyClock, sender?: Sender) {
    this.sweep();
    return super.refuse(caller, policy, unbanSeq, clock, sender);
  }
  override async peek(caller: string, policy: Policy, unbanSeq?: number) {
    this.sweep();
    return super.peek(caller, policy, unbanSeq);
  }
  override async unban(caller: string) {
    this.sweep();
    return super.unban(caller);
  }
  override async banOf(caller: string, unbanSeq?: number) {
    this.sweep();
    return super.banOf(caller, unbanSeq);
  }
}

describe('MemoryLimiterStore: vectors, sweeping before every call', () => {
  runVectors((clock, rules) => new SweepingStore({ clock, rules }));
});

describe('MemoryLimiterStore: forgetting idle callers', () => {
  const oneAMinute: Policy = { name: 'enterprise', perMinute: 1, perDay: 1000 };
  let now: number;
  let store: MemoryLimiterStore;

  beforeEach(() => {
    now = Date.parse('2024-03-01T23:59:30.000Z');
    store = new MemoryLimiterStore({ clock: () => now });
  });
  afterEach(() => store.close());

  it("keeps a caller while today's count stands and its request is in the minute", async () => {
    await store.hit('key:a', oneAMinute);
    now = Date.parse('2024-03-02T00:00:29.999Z');
    store.sweep();
    expect(store.size).toBe(1);
    now += 1;
    store.sweep();
    expect(store.size).toBe(0);
  });

  it('keeps a caller whose day count is from today even with an empty minute', async () => {
    now = Date.parse('2024-03-01T12:00:00.000Z');
    await store.hit('key:a', oneAMinute);
    now = Date.parse('2024-03-01T23:59:59.999Z');
    store.sweep();
    expect(store.size).toBe(1);
    now += 1;
    store.sweep();
    expect(store.size).toBe(0);
  });

  it('keeps a caller for 60 s after its last 429 that counted toward a ban', async () => {
    await store.hit('key:a', oneAMinute);
    now = Date.parse('2024-03-02T00:00:29.000Z');
    // The first 429 follows no other: only its wait is kept; the second, sent within that wait, counts.
    expect((await store.hit('key:a', oneAMinute)).kind).toBe('rate-limited');
    expect((await store.hit('key:a', oneAMinute)).kind).toBe('rate-limited');
    now = Date.parse('2024-03-02T00:01:28.999Z');
    store.sweep();
    expect(store.size).toBe(1);
    now += 1;
    store.sweep();
    expect(store.size).toBe(0);
  });

  it('keeps the escalation history for 24 h after a ban ends, even after an unban', async () => {
    await store.hit('key:a', oneAMinute);
    for (let i = 0; i < 11; i++) await store.hit('key:a', oneAMinute);
    const ban = await store.banOf('key:a');
    expect(ban?.level).toBe(1);
    await store.unban('key:a');
    now = ban!.until + 86_400_000 - 1;
    store.sweep();
    expect(store.size).toBe(1);
    now += 1;
    store.sweep();
    expect(store.size).toBe(0);
  });

  it('never holds a caller that only peeked', async () => {
    await store.peek('ip:192.0.2.1', oneAMinute);
    expect(store.size).toBe(0);
  });

  it('sweeps on its own timer', async () => {
    vi.useFakeTimers();
    try {
      const timed = new MemoryLimiterStore({ clock: () => now, sweepIntervalMs: 1000 });
      await timed.hit('key:a', oneAMinute);
      now += 86_400_000;
      vi.advanceTimersByTime(1000);
      expect(timed.size).toBe(0);
      await timed.close();
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('MemoryLimiterStore: sweeping a slice at a time', () => {
  const free: Policy = { name: 'free', perMinute: 60, perDay: 1000 };
  const nextTurn = () => new Promise((resolve) => setImmediate(resolve));
  /** 1,000 callers, counted once each. */
  const thousandCallers = async (store: MemoryLimiterStore) => {
    for (let i = 0; i < 1_000; i++) await store.hit(`ip:127.0.${i >> 8}.${i & 255}`, free);
  };
  /** Turns of the event loop until the sweep under way ends (at most `limit`), `eachTurn` before each. */
  const turnsUntilSwept = async (
    store: MemoryLimiterStore,
    limit: number,
    eachTurn = async (_turn: number): Promise<unknown> => undefined,
  ) => {
    let turns = 0;
    while (store.sweeping && turns < limit) {
      await eachTurn(turns);
      await nextTurn();
      turns++;
    }
    return turns;
  };

  it('forgets idle callers over several turns of the event loop, keeping the active ones', async () => {
    let now = Date.parse('2024-03-01T12:00:00.000Z');
    // One table: the callers in their order of arrival, so that the slices' counts are known.
    const store = new MemoryLimiterStore({ clock: () => now, sweepSlice: 100, sliceBudgetMs: Infinity, shards: 1 });
    await thousandCallers(store);
    now += 86_400_000;
    await store.hit('ip:127.9.9.9', free);
    store.startSweep();
    // One slice looked at 100 callers, then let the loop run.
    expect(store.sweeping).toBe(true);
    expect(store.size).toBe(1_001 - 100);
    expect(await turnsUntilSwept(store, 100)).toBe(10);
    expect(store.size).toBe(1);
    expect((await store.peek('ip:127.9.9.9', free)).minute.remaining).toBe(59);
    await store.close();
  });

  it('in its default tables too: every caller held when it began is looked at once, newcomers are left', async () => {
    let now = Date.parse('2024-03-01T12:00:00.000Z');
    const store = new MemoryLimiterStore({ clock: () => now, sweepSlice: 100, sliceBudgetMs: Infinity });
    await thousandCallers(store);
    now += 86_400_000;
    store.startSweep();
    // Newcomers during the sweep: not looked at by it (and not idle yet anyway).
    expect(await turnsUntilSwept(store, 100, (turn) => store.hit(`ip:127.5.0.${turn}`, free))).toBe(9);
    expect(store.size).toBe(9);
    await store.close();
  });

  it('ends a slice once its time is spent, however few callers it has looked at, and still forgets them all', async () => {
    let now = Date.parse('2024-03-01T12:00:00.000Z');
    // A slice could take every caller, but has no time at all: it stops at its first reading of the time.
    const store = new MemoryLimiterStore({ clock: () => now, sweepSlice: 10_000, sliceBudgetMs: 0 });
    await thousandCallers(store);
    now += 86_400_000;
    store.startSweep();
    expect(store.size).toBeGreaterThan(900);
    expect(await turnsUntilSwept(store, 1_000)).toBeGreaterThan(10);
    expect(store.size).toBe(0);
    await store.close();
  });

  it('refuses a slice of no callers', () => {
    expect(() => new MemoryLimiterStore({ clock: () => 0, sweepSlice: 0 })).toThrow(RangeError);
  });
});

describe('MemoryLimiterStore: the timer sweeps a slice at a time', () => {
  const free: Policy = { name: 'free', perMinute: 60, perDay: 1000 };
  const active = 'ip:127.9.9.9';
  let now: number;

  beforeEach(() => {
    vi.useFakeTimers();
    now = Date.parse('2024-03-01T12:00:00.000Z');
  });
  afterEach(() => vi.useRealTimers());

  /** A store on the fake timers with `idle` callers that have gone idle, and one active caller. */
  async function storeWith(idle: number, sweepSlice: number) {
    const store = new MemoryLimiterStore({
      clock: () => now,
      sweepIntervalMs: 60_000,
      sweepSlice,
      sliceBudgetMs: Infinity,
      shards: 1,
    });
    for (let i = 0; i < idle; i++) await store.hit(`ip:127.1.${i >> 8}.${i & 255}`, free);
    now += 86_400_000;
    await store.hit(active, free);
    return store;
  }

  it('forgets idle callers a slice per turn of the event loop, keeping a caller that keeps sending', async () => {
    const store = await storeWith(1_000, 100);
    // The interval fires and runs one slice; the next waits for the following turn (setImmediate).
    vi.advanceTimersToNextTimer();
    expect(store.sweeping).toBe(true);
    expect(store.size).toBe(1_001 - 100);
    let slices = 1;
    while (store.sweeping && slices < 100) {
      now += 10;
      await store.hit(active, free);
      vi.advanceTimersToNextTimer();
      slices++;
    }
    expect(slices).toBe(11);
    expect(store.size).toBe(1);
    expect((await store.peek(active, free)).minute.remaining).toBe(60 - 11);
    await store.close();
  });

  it('looks only at the callers held when the sweep began, and starts no second sweep meanwhile', async () => {
    const store = await storeWith(99, 10);
    vi.advanceTimersToNextTimer();
    // The first slice forgot ip:127.1.0.0; it comes back, after the callers the sweep is to look at.
    expect(store.size).toBe(100 - 10);
    await store.hit('ip:127.1.0.0', free);
    store.startSweep();
    expect(store.size).toBe(100 - 10 + 1);
    // More newcomers each turn than a slice looks at: the sweep still ends after its 100 callers.
    let slices = 1;
    let newcomers = 0;
    // Bounded, so that a sweep that never ends fails the test rather than hanging it.
    while (store.sweeping && slices < 100) {
      for (let i = 0; i < 20; i++) await store.hit(`ip:127.2.0.${newcomers++}`, free);
      vi.advanceTimersToNextTimer();
      slices++;
    }
    expect(slices).toBe(10);
    expect(store.size).toBe(newcomers + 2);
    expect((await store.peek('ip:127.1.0.0', free)).minute.remaining).toBe(59);
    await store.close();
  });

  it('stops a sweep under way when closed', async () => {
    const store = await storeWith(1_000, 100);
    vi.advanceTimersToNextTimer();
    expect(store.sweeping).toBe(true);
    expect(vi.getTimerCount()).toBe(2); // the interval and the next slice
    await store.close();
    expect(store.sweeping).toBe(false);
    expect(vi.getTimerCount()).toBe(0);
  });
});
