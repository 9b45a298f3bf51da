import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  EMPTY_MINUTE,
  type MinuteLog,
  minuteAfter,
  minuteAppend,
  minuteCount,
  minuteEntries,
  minuteInstants,
  minuteNewest,
  minuteRequestAt,
} from '../../src/ratelimit/minute-log.js';

const build = (instants: number[], from: MinuteLog = EMPTY_MINUTE): MinuteLog => instants.reduce(minuteAppend, from);

describe('the minute log', () => {
  it('keeps the requests of one millisecond as one entry with their count', () => {
    const log = build([1, 1, 1, 2, 5, 5]);
    expect(minuteEntries(log)).toBe(3);
    expect(minuteCount(log)).toBe(6);
    expect(minuteInstants(log)).toEqual([1, 1, 1, 2, 5, 5]);
    expect(minuteNewest(log)).toBe(5);
    expect([0, 1, 2, 3, 4, 5, 6, -1].map((k) => minuteRequestAt(log, k))).toEqual([
      1,
      1,
      1,
      2,
      5,
      5,
      undefined,
      undefined,
    ]);
  });

  it('forgets whole milliseconds, oldest first', () => {
    const log = build([1, 1, 2, 3, 3, 3, 4]);
    expect(minuteInstants(minuteAfter(log, 2))).toEqual([3, 3, 3, 4]);
    expect(minuteCount(minuteAfter(log, 2))).toBe(4);
    expect(minuteRequestAt(minuteAfter(log, 2), 3)).toBe(4);
    expect(minuteAfter(log, 0)).toBe(log);
    expect(minuteCount(minuteAfter(log, 4))).toBe(0);
    expect(minuteNewest(minuteAfter(log, 4))).toBeUndefined();
  });

  it('finds every request where a list of instants would have it, and forgets as such a list would', () => {
    const arrivals = fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 1, maxLength: 300 });
    fc.assert(
      fc.property(arrivals, fc.integer({ min: 0, max: 400 }), (gaps, cut) => {
        let now = 1_000;
        const instants = gaps.map((gap) => (now += gap));
        const log = build(instants);
        expect(minuteInstants(log)).toEqual(instants);
        for (let k = -1; k <= instants.length; k++) expect(minuteRequestAt(log, k)).toBe(instants[k]);
        const cutoff = 1_000 + cut;
        expect(minuteInstants(minuteAfter(log, cutoff))).toEqual(instants.filter((t) => t > cutoff));
        expect(minuteEntries(log)).toBe(new Set(instants).size);
      }),
    );
  });

  it('stays a value: a newer state never changes an older one, in the same millisecond or a new one', () => {
    const older = build([1, 2, 2]);
    const sameMs = minuteAppend(older, 2);
    const newMs = minuteAppend(older, 3);
    const branch = minuteAppend(older, 4);
    expect(minuteInstants(older)).toEqual([1, 2, 2]);
    expect(minuteInstants(sameMs)).toEqual([1, 2, 2, 2]);
    expect(minuteInstants(newMs)).toEqual([1, 2, 2, 3]);
    expect(minuteInstants(branch)).toEqual([1, 2, 2, 4]);
    expect(minuteInstants(minuteAppend(sameMs, 5))).toEqual([1, 2, 2, 2, 5]);
    expect(minuteInstants(minuteAppend(newMs, 3))).toEqual([1, 2, 2, 3, 3]);
    expect(minuteInstants(newMs)).toEqual([1, 2, 2, 3]);
  });

  it('never shares the empty log', () => {
    const [a, b] = [minuteAppend(EMPTY_MINUTE, 1), minuteAppend(EMPTY_MINUTE, 2)];
    expect([minuteInstants(a), minuteInstants(b), minuteInstants(EMPTY_MINUTE)]).toEqual([[1], [2], []]);
  });

  it('holds one entry per millisecond however many are admitted: a million in a minute is 60,000 entries', () => {
    let log = EMPTY_MINUTE;
    for (let request = 0; request < 1_000_000; request++) {
      const now = Math.floor((request * 60_000) / 1_000_000);
      log = minuteAfter(minuteAppend(log, now), now - 60_000);
    }
    expect(minuteCount(log)).toBe(1_000_000);
    expect(minuteEntries(log)).toBe(60_000);
    // Within about twice what it holds.
    expect(log.at.length).toBeLessThanOrEqual(2 * 60_000 + 2);
  });

  it('keeps its buffers within about twice what it holds, however long it runs', () => {
    let log = EMPTY_MINUTE;
    for (let t = 1; t <= 100_000; t++) log = minuteAfter(minuteAppend(minuteAppend(log, t), t), t - 1_000);
    expect(minuteCount(log)).toBe(2_000);
    expect(log.at.length).toBeLessThanOrEqual(2 * 1_000 + 2);
    expect(log.before.length).toBe(log.at.length);
  });

  it('survives JSON', () => {
    const log = minuteAfter(build([1, 2, 2, 3, 4, 4, 5]), 2);
    const copy = JSON.parse(JSON.stringify(log)) as MinuteLog;
    expect(minuteInstants(minuteAppend(copy, 5))).toEqual(minuteInstants(minuteAppend(log, 5)));
  });
});
