import type { Clock } from '../clock.js';
import type { Db } from '../db/database.js';
import { type Pace, paced } from '../jobs/paced.js';
import { every, type Periodic } from '../jobs/periodic.js';

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
  log: { warn(obj: object, msg: string): void };
  pace?: Pace;
}

/**
 * Deletes events older than the retention period, oldest first, in paced slices. A slice reads the
 * oldest events by `seq` (the primary key: no index of their times is needed) and deletes those that
 * expired; it stops at the first slice that holds one still kept. Instances on one PostgreSQL may
 * sweep at once: a row deleted twice is deleted once.
 */
export class EventRetention {
  #job: Periodic | undefined;
  #stopping = false;

  constructor(private readonly deps: RetentionDeps) {}

  /** Deletes what expired by now; answers how many events. */
  async sweep(): Promise<number> {
    const { db, clock, retentionMs } = this.deps;
    const cutoff = new Date(clock() - retentionMs).toISOString();
    let deleted = 0;
    await paced(
      async (size) => {
        const oldest = await db.selectFrom('events').select(['seq', 'created_at']).orderBy('seq').limit(size).execute();
        const expired = oldest.filter((row) => row.created_at < cutoff).map((row) => row.seq);
        if (expired.length > 0) await db.deleteFrom('events').where('seq', 'in', expired).execute();
        deleted += expired.length;
        return expired.length === size;
      },
      this.deps.pace ?? RETENTION_PACE,
      () => this.#stopping,
    );
    return deleted;
  }

  /** Sweeps now, then every `RETENTION_INTERVAL_MS`; resolves once the first sweep is done. */
  start(): Promise<void> {
    this.#job ??= every(
      RETENTION_INTERVAL_MS,
      () => this.sweep(),
      (error) => this.deps.log.warn({ err: error }, 'retention: could not delete expired events; trying again in a minute'),
    );
    return this.#job.first;
  }

  async stop(): Promise<void> {
    this.#stopping = true;
    await this.#job?.stop();
  }
}
