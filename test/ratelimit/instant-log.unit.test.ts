import { describe, expect, it } from 'vitest';
import {
  EMPTY_LOG,
  logAfter,
  logAppend,
  logAt,
  logEntries,
  logNewest,
  logSize,
  type InstantLog,
} from '../../src/ratelimit/instant-log.js';

const build = (instants: number[]): InstantLog => instants.reduce(logAppend, EMPTY_LOG);

describe('the instant log', () => {
  it('appends and forgets in order', () => {
    const log = build([1, 2, 3, 4]);
    expect(logEntries(log)).toEqual([1, 2, 3, 4]);
    expect(logEntries(logAfter(log, 2))).toEqual([3, 4]);
    expect(logAt(logAfter(log, 2), 0)).toBe(3);
    expect(logSize(logAfter(log, 4))).toBe(0);
    expect(logAt(log, 4)).toBeUndefined();
  });

  it('stays a value: growing a newer state never changes an older one, and an older one can still grow', () => {
    const older = build([1, 2, 3]);
    const newer = logAppend(older, 4);
    expect(logEntries(older)).toEqual([1, 2, 3]);
    const branch = logAppend(older, 9);
    expect(logEntries(branch)).toEqual([1, 2, 3, 9]);
    expect(logEntries(newer)).toEqual([1, 2, 3, 4]);
    expect(logEntries(logAppend(newer, 5))).toEqual([1, 2, 3, 4, 5]);
    expect(logEntries(branch)).toEqual([1, 2, 3, 9]);
  });

  it('never shares the empty log', () => {
    const a = logAppend(EMPTY_LOG, 1);
    const b = logAppend(EMPTY_LOG, 2);
    expect([logEntries(a), logEntries(b), logEntries(EMPTY_LOG)]).toEqual([[1], [2], []]);
  });

  it('keeps its buffer within about twice what it holds, however long it runs', () => {
    let log = EMPTY_LOG;
    for (let t = 1; t <= 100_000; t++) log = logAfter(logAppend(log, t), t - 1_000);
    expect(logSize(log)).toBe(1_000);
    expect(log.buf.length).toBeLessThanOrEqual(2 * 1_000 + 2);
  });

  it('keeps the newest entries', () => {
    const log = build([1, 2, 3, 4, 5]);
    expect(logEntries(logNewest(log, 2))).toEqual([4, 5]);
    expect(logNewest(log, 5)).toBe(log);
    expect(logEntries(logNewest(log, 9))).toEqual([1, 2, 3, 4, 5]);
    expect(logEntries(logAppend(logNewest(log, 1), 6))).toEqual([5, 6]);
    expect(logEntries(log)).toEqual([1, 2, 3, 4, 5]);
  });

  it('keeps its buffer within about twice what it holds when only the newest are kept', () => {
    let log = EMPTY_LOG;
    for (let t = 1; t <= 100_000; t++) log = logNewest(logAppend(log, t), 1_000);
    expect(logEntries(log)).toEqual(Array.from({ length: 1_000 }, (_, i) => 99_001 + i));
    expect(log.buf.length).toBeLessThanOrEqual(2 * 1_000 + 2);
  });

  it('survives JSON', () => {
    const log = logAfter(build([1, 2, 3, 4, 5]), 2);
    const copy = JSON.parse(JSON.stringify(log)) as InstantLog;
    expect(logEntries(logAppend(copy, 6))).toEqual(logEntries(logAppend(log, 6)));
  });
});
