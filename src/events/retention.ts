import type { Clock } from '../clock.js';
import type { Db } from '../db/database.js';
import type { Pace } from '../jobs/paced.js';
import { type JobLog, SlicedJob } from '../jobs/sliced-job.js';

/** How often each instance deletes what outlived the retention period. */
export const RETENTION_INTERVAL_MS = 60_000;

/**
 * Slices of about 2 ms of the event loop (SQLite holds it for a whole slice), with long rests between
 * them: nothing waits for retention, and a log that grows slowly keeps the background checkpoint's
 * restarts few and short, which every writer waits for (db/checkpointer.ts).
 */
export const RETENTION_PACE: Pace = { sliceMs: 2, idleShare: 0.05, busyShare: 0.03, first: 100, min: 10, max: 500 };

export interface RetentionDeps {
  db: Db;
  clock: Clock;
  /** `EVENTS_RETENTION_DAYS`, in ms. */
  retentionMs: number;
  log: JobLog;
  pace?: Pace;
}

/**
 * Deletes events, and the webhook delivery log, older than the retention period, oldest first, in
 * paced slices. A slice reads the oldest rows by `seq` (the primary key: no index of their times is
 * needed) and deletes those that expired; it stops at the first slice that holds one still kept.
 * Instances on one PostgreSQL may sweep at once: a row deleted twice is deleted once.
 */
export class EventRetention {
  readonly #job: SlicedJob;

  constructor(private readonly deps: RetentionDeps) {
    this.#job = new SlicedJob({ name: 'retention', everyMs: RETENTION_INTERVAL_MS, pace: deps.pace ?? RETENTION_PACE, log: deps.log });
  }

  /** Deletes the events and delivery-log entries that expired by now; answers how many rows. */
  async sweep(): Promise<number> {
    const cutoff = new Date(this.deps.clock() - this.deps.retentionMs).toISOString();
    return (await this.#expire('events', cutoff)) + (await this.#expire('webhook_deliveries', cutoff));
  }

  async #expire(table: 'events' | 'webhook_deliveries', cutoff: string): Promise<number> {
    const { db } = this.deps;
    let deleted = 0;
    await this.#job.pass(async (size) => {
      const oldest = await db.selectFrom(table).select(['seq', 'created_at']).orderBy('seq').limit(size).execute();
      const expired = oldest.filter((row) => row.created_at < cutoff).map((row) => row.seq);
      if (expired.length > 0) await db.deleteFrom(table).where('seq', 'in', expired).execute();
      deleted += expired.length;
      return expired.length === size;
    });
    return deleted;
  }

  /** Sweeps now, then every `RETENTION_INTERVAL_MS`; resolves once the first sweep is done. */
  start(): Promise<void> {
    return this.#job.start(() => this.sweep());
  }

  stop(): Promise<void> {
    return this.#job.stop();
  }
}
