/**
 * A test key's clock (contract §11): the key's time is the real time moved by `offsetMs`, or, while the
 * clock is frozen, the instant it stands at. A key without one (every live key, a test key never moved)
 * is on the real time. Pure: the instants in and out are ms since the epoch.
 */
export interface KeyClock {
  /** The key's time minus the real time, while it runs. */
  readonly offsetMs: number;
  /** Where it stands while frozen; null while it runs. */
  readonly frozenAt: number | null;
}

/** The real time, running: every key's clock until a test moves it. */
export const REAL_TIME: KeyClock = Object.freeze({ offsetMs: 0, frozenAt: null });

/** The most one advance may move a clock: two years, leap day included (contract §11: more is a `400`). */
export const MAX_ADVANCE_MS = 731 * 86_400_000;

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

/** The clock moved forward to the key's instant `to` (at least its now: the caller checks), frozen or running as it was. */
export function advancedTo(clock: KeyClock, realNow: number, to: number): KeyClock {
  return clock.frozenAt === null ? { offsetMs: to - realNow, frozenAt: null } : { offsetMs: 0, frozenAt: to };
}

/** The clock stopped where it stands. */
export function frozen(clock: KeyClock, realNow: number): KeyClock {
  return { offsetMs: 0, frozenAt: keyNow(clock, realNow) };
}

/** The clock running on from where it stands. */
export function resumed(clock: KeyClock, realNow: number): KeyClock {
  return { offsetMs: offsetAt(clock, realNow), frozenAt: null };
}

/** Whether the clock is the real time, running (nothing to keep of it). */
export function isRealTime(clock: KeyClock): boolean {
  return clock.frozenAt === null && clock.offsetMs === 0;
}
