/**
 * The sliding minute's admissions, one entry per millisecond: the requests admitted in one
 * millisecond are one entry, so a key's log holds at most 60,000 entries however high its limit.
 * Each entry keeps its instant and how many requests were admitted before it (`before`, a running
 * count since the buffer began), and the log keeps the running count after its newest (`total`), so
 * the requests it holds are `total - before[start]`, and the k-th of them is found by a binary search:
 * no call walks the entries. As ./instant-log.ts, a window [start, end) onto buffers that only grow at
 * their end, and a value all the same: an admission in the newest entry's millisecond changes only
 * `total`, one in a new millisecond pushes beyond every older state's `end`, and an older state that
 * appends copies first. Plain numbers and arrays, so a state still survives JSON; the Redis script
 * keeps the same (./redis-script.ts).
 */
export interface MinuteLog {
  /** Instants (ms), oldest first, one per millisecond that admitted a request. */
  readonly at: number[];
  /** For each entry, the running count of the requests admitted before its first one. */
  readonly before: number[];
  readonly start: number;
  readonly end: number;
  /** The running count after the newest entry's last request. */
  readonly total: number;
}

export const EMPTY_MINUTE: MinuteLog = Object.freeze({ at: [], before: [], start: 0, end: 0, total: 0 }) as MinuteLog;

/** How many requests the log holds. */
export function minuteCount(log: MinuteLog): number {
  return log.end === log.start ? 0 : log.total - log.before[log.start]!;
}

/** How many entries (milliseconds) the log holds: what it costs in memory. */
export function minuteEntries(log: MinuteLog): number {
  return log.end - log.start;
}

/** The newest entry's instant; undefined when the log is empty. */
export function minuteNewest(log: MinuteLog): number | undefined {
  return log.end === log.start ? undefined : log.at[log.end - 1];
}

/** The instant of the request `k` places from the oldest (0: the oldest); undefined outside the log. */
export function minuteRequestAt(log: MinuteLog, k: number): number | undefined {
  if (k < 0 || k >= minuteCount(log)) return undefined;
  const wanted = log.before[log.start]! + k;
  // The last entry whose first request is at or before the wanted one.
  let low = log.start;
  let high = log.end - 1;
  while (low < high) {
    const middle = (low + high + 1) >>> 1;
    if (log.before[middle]! <= wanted) low = middle;
    else high = middle - 1;
  }
  return log.at[low];
}

/** The log with one more request admitted at `now` (never before its newest entry). */
export function minuteAppend(log: MinuteLog, now: number): MinuteLog {
  if (log.end > log.start && log.at[log.end - 1] === now)
    return { at: log.at, before: log.before, start: log.start, end: log.end, total: log.total + 1 };
  if (log.end === log.at.length && log.end > log.start) {
    log.at.push(now);
    log.before.push(log.total);
    return { at: log.at, before: log.before, start: log.start, end: log.end + 1, total: log.total + 1 };
  }
  // Another state already grew these buffers (or there are none yet): this one gets its own.
  const at = log.at.slice(log.start, log.end);
  const before = log.before.slice(log.start, log.end);
  at.push(now);
  before.push(log.total);
  return { at, before, start: 0, end: at.length, total: log.total + 1 };
}

/** The requests after `cutoff`; a request at t is inside a window of length W at `now` while now - t < W. */
export function minuteAfter(log: MinuteLog, cutoff: number): MinuteLog {
  if (log.end === log.start || log.at[log.start]! > cutoff) return log;
  // The first entry after the cutoff: the oldest is at or before it.
  let low = log.start + 1;
  let high = log.end;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (log.at[middle]! <= cutoff) low = middle + 1;
    else high = middle;
  }
  const start = low;
  if (start === log.end) return EMPTY_MINUTE;
  // Once the forgotten part outweighs the live one, the live part moves to buffers of their own, so
  // that a buffer never holds more than about twice what its newest state still needs.
  if (start > 64 && start > log.end - start) {
    return {
      at: log.at.slice(start, log.end),
      before: log.before.slice(start, log.end),
      start: 0,
      end: log.end - start,
      total: log.total,
    };
  }
  return { at: log.at, before: log.before, start, end: log.end, total: log.total };
}

/** Every request's instant, oldest first, an instant repeated for each request admitted in it (for tests). */
export function minuteInstants(log: MinuteLog): number[] {
  const instants: number[] = [];
  for (let i = log.start; i < log.end; i++) {
    const count = (i + 1 < log.end ? log.before[i + 1]! : log.total) - log.before[i]!;
    for (let n = 0; n < count; n++) instants.push(log.at[i]!);
  }
  return instants;
}
