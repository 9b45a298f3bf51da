/** Milliseconds since the Unix epoch. Injected everywhere time matters so tests never sleep. */
export type Clock = () => number;

export const systemClock: Clock = () => Date.now();

/**
 * A test key's clock (docs/testing-clients.md#testing-your-client-in-seconds): the key's time is the real time moved by
 * `offsetMs`, or, while the clock is frozen, the instant it stands at. A key without one (every live key, a test key
 * never moved) is on the real time. Pure: the instants in and out are ms since the epoch.
 */
export interface KeyClock {
  /** The key's time minus the real time, while it runs. */
  readonly offsetMs: number;
  /** Where it stands while frozen; null while it runs. */
  readonly frozenAt: number | null;
}

/** The real time, running: every key's clock until a test moves it. */
export const REAL_TIME: KeyClock = Object.freeze({ offsetMs: 0, frozenAt: null });

/** The caller's now at the real instant `realNow`: a test key's clock's, else the real time (no clock). */
export function callerNow(clock: KeyClock | undefined, realNow: number): number {
  return clock === undefined ? realNow : keyNow(clock, realNow);
}

/** The key's instant at the real instant `realNow`. */
export function keyNow(clock: KeyClock, realNow: number): number {
  return clock.frozenAt ?? realNow + clock.offsetMs;
}

/** How far the key's time is ahead of the real time at `realNow` (negative behind). */
export function offsetAt(clock: KeyClock, realNow: number): number {
  return keyNow(clock, realNow) - realNow;
}
