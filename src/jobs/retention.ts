import type { Pace } from './paced.js';

/**
 * How the sweeps of what outlived its period run: the events and the webhook delivery log
 * (events/retention.ts), the `Idempotency-Key` records (idempotency/expiry.ts). One pace for all of them.
 */

/** How often each instance deletes what outlived its period. */
export const RETENTION_INTERVAL_MS = 60_000;

/**
 * Slices of about 2 ms of the event loop (SQLite holds it for a whole slice), with long rests between
 * them: nothing waits for retention, and a log that grows slowly keeps the background checkpoint's
 * restarts few and short, which every writer waits for (db/checkpointer.ts).
 */
export const RETENTION_PACE: Pace = { sliceMs: 2, idleShare: 0.05, busyShare: 0.03, first: 100, min: 10, max: 500 };
