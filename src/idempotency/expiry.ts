import type { Clock } from '../clock.js';
import type { Db } from '../db/database.js';
import type { Pace } from '../jobs/paced.js';
import { RETENTION_INTERVAL_MS, RETENTION_PACE } from '../jobs/retention.js';
import { type JobLog, SlicedJob } from '../jobs/sliced-job.js';
import { IDEMPOTENCY_WINDOW_MS } from './window.js';

export interface IdempotencyExpiryDeps {
  db: Db;
  clock: Clock;
  log: JobLog;
  pace?: Pace;
}

/**
 * Deletes the `Idempotency-Key` records that left the window (`IDEMPOTENCY_WINDOW_MS`): once a key is
 * older than that, a request that sends it again is a new request (./writes.ts), so the record only
 * takes room. Oldest first, in paced slices, at the events' retention pace: a slice reads the creation
 * time of its last row (by the `idempotency_records_created_at` index) and deletes every expired row
 * created by then. Instances on one PostgreSQL may sweep at once: a row deleted twice is deleted once.
 * A test key's records whose clock a test moved are left to its own time.
 */
export class IdempotencyExpiry {
  readonly #job: SlicedJob;

  constructor(private readonly deps: IdempotencyExpiryDeps) {
    this.#job = new SlicedJob({
      name: 'idempotency expiry',
      everyMs: RETENTION_INTERVAL_MS,
      pace: deps.pace ?? RETENTION_PACE,
      log: deps.log,
    });
  }

  /** Deletes the records that expired by now; answers how many. */
  async sweep(): Promise<number> {
    const { db, clock } = this.deps;
    const cutoff = new Date(clock() - IDEMPOTENCY_WINDOW_MS).toISOString();
    // A test key whose clock a test moved keeps its records in its own time: they expire in it (./writes.ts),
    // and go with its reset (test-mode/reset.ts), not by the real time.
    const clocked = db.selectFrom('test_clocks').select('api_key_id');
    let deleted = 0;
    await this.#job.pass(async (size) => {
      const oldest = await db
        .selectFrom('idempotency_records')
        .select('created_at')
        .where('created_at', '<=', cutoff)
        .where('api_key_id', 'not in', clocked)
        .orderBy('created_at')
        .limit(size)
        .execute();
      if (oldest.length === 0) return false;
      // Rows created in the same millisecond as the slice's last go with it: a slice may be a few rows larger.
      const through = oldest[oldest.length - 1]!.created_at;
      const result = await db
        .deleteFrom('idempotency_records')
        .where('created_at', '<=', through)
        .where('api_key_id', 'not in', clocked)
        .executeTakeFirst();
      deleted += Number(result.numDeletedRows);
      return oldest.length === size;
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
