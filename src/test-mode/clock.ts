import { type KeyClock, keyNow, offsetAt } from '../clock.js';

/**
 * How a test moves a key's clock (docs/testing-clients.md#testing-your-client-in-seconds): pure, the instants in and
 * out in ms since the epoch. What a key's clock is, and the caller's now, are ../clock.ts's.
 */

/**
 * The most one advance may move a clock: two years, leap day included
 * (docs/testing-clients.md#testing-your-client-in-seconds: more is a `400`).
 */
export const MAX_ADVANCE_MS = 731 * 86_400_000;

/**
 * The clock moved forward to the key's instant `to` (at least its now: the caller checks), frozen or running as it was.
 */
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
