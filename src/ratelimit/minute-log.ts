/**
 * The sliding minute's log: admission instants, oldest first, kept as a window [start, end) onto a
 * buffer that only grows at its end. Appending to the newest state pushes onto that buffer, and
 * forgetting what left the minute moves `start`: both O(1) per decision, where copying the log cost
 * O(entries) (a busy enterprise key's minute holds tens of thousands). States stay values all the
 * same: a later push lies beyond an older state's `end`, and appending to an older state copies first.
 * Plain numbers and an array, so a state still survives JSON.
 */
export interface MinuteLog {
  readonly buf: number[];
  readonly start: number;
  readonly end: number;
}

export const EMPTY_LOG: MinuteLog = Object.freeze({ buf: [], start: 0, end: 0 }) as MinuteLog;

export function logSize(log: MinuteLog): number {
  return log.end - log.start;
}

/** The entry `i` places from the oldest, or undefined outside the log. */
export function logAt(log: MinuteLog, i: number): number | undefined {
  return i >= 0 && i < logSize(log) ? log.buf[log.start + i] : undefined;
}

export function logAppend(log: MinuteLog, instant: number): MinuteLog {
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
export function logAfter(log: MinuteLog, cutoff: number): MinuteLog {
  let start = log.start;
  while (start < log.end && log.buf[start]! <= cutoff) start++;
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

export function logEntries(log: MinuteLog): number[] {
  return log.buf.slice(log.start, log.end);
}
