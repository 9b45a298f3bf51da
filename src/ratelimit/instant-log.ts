/**
 * A log of instants, oldest first: the sliding minute's admissions, and the rejections that count
 * toward a ban. Kept as a window [start, end) onto a buffer that only grows at its end. Appending to
 * the newest state pushes onto that buffer, and forgetting the oldest entries moves `start`: both O(1)
 * per decision, where copying the log cost O(entries) (a busy enterprise key's minute holds tens of
 * thousands, and so can the rejections of a caller refused under a high `BAN_AFTER_REJECTIONS`).
 * States stay values all the same: a later push lies beyond an older state's `end`, and appending to
 * an older state copies first. Plain numbers and an array, so a state still survives JSON.
 */
export interface InstantLog {
  readonly buf: number[];
  readonly start: number;
  readonly end: number;
}

export const EMPTY_LOG: InstantLog = Object.freeze({ buf: [], start: 0, end: 0 }) as InstantLog;

export function logSize(log: InstantLog): number {
  return log.end - log.start;
}

/** The entry `i` places from the oldest, or undefined outside the log. */
export function logAt(log: InstantLog, i: number): number | undefined {
  return i >= 0 && i < logSize(log) ? log.buf[log.start + i] : undefined;
}

export function logAppend(log: InstantLog, instant: number): InstantLog {
  if (log.end === log.buf.length && log.end > log.start) {
    log.buf.push(instant);
    return { buf: log.buf, start: log.start, end: log.end + 1 };
  }
  // Another state already grew this buffer (or there is none yet): this one gets its own.
  const buf = log.buf.slice(log.start, log.end);
  buf.push(instant);
  return { buf, start: 0, end: buf.length };
}

/** The entries after `cutoff`; a request at t is inside a window of length W at `now` while now - t < W. */
export function logAfter(log: InstantLog, cutoff: number): InstantLog {
  let start = log.start;
  while (start < log.end && log.buf[start]! <= cutoff) start++;
  return from(log, start);
}

/** The newest `count` entries (all of them when there are no more). */
export function logNewest(log: InstantLog, count: number): InstantLog {
  return logSize(log) > count ? from(log, log.end - count) : log;
}

/** The log without its entries before buffer index `start`. */
function from(log: InstantLog, start: number): InstantLog {
  if (start === log.start) return log;
  if (start === log.end) return EMPTY_LOG;
  // Once the forgotten part outweighs the live one, the live part moves to a buffer of its own, so
  // that a buffer never holds more than about twice what its newest state still needs.
  if (start > 64 && start > log.end - start) {
    const buf = log.buf.slice(start, log.end);
    return { buf, start: 0, end: buf.length };
  }
  return { buf: log.buf, start, end: log.end };
}

export function logEntries(log: InstantLog): number[] {
  return log.buf.slice(log.start, log.end);
}
