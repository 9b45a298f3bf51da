import type { Clock } from '../clock.js';
import type { Db } from '../db/database.js';
import type { Pace } from '../jobs/paced.js';
import { RETENTION_INTERVAL_MS, RETENTION_PACE } from '../jobs/retention.js';
import { type JobLog, SlicedJob } from '../jobs/sliced-job.js';

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
    this.#job = new SlicedJob({
      name: 'retention',
      everyMs: RETENTION_INTERVAL_MS,
      pace: deps.pace ?? RETENTION_PACE,
      log: deps.log,
    });
  }

  /** Deletes the events and delivery-log entries that expired by now; answers how many rows. */
  async sweep(): Promise<number> {
    const now = this.deps.clock();
    const cutoff = new Date(now - this.deps.retentionMs).toISOString();
    return (
      (await this.#expire('events', cutoff)) +
      (await this.#expire('webhook_deliveries', cutoff)) +
      (await this.#expireClocked(now))
    );
  }

  /**
   * The keys whose clock a test moved keep their records in their own time: left out of the sweep by
   * the real time (their rows' times are not in `seq`'s order), each is swept by its own now, and an
   * event whose deliveries are pending stays (docs/testing-clients.md#testing-your-client-in-seconds).
   */
  async #expireClocked(now: number): Promise<number> {
    const { db, retentionMs } = this.deps;
    let deleted = 0;
    for (const clock of await db.selectFrom('test_clocks').select(['api_key_id', 'offset_ms', 'frozen_at']).execute()) {
      const keyNow = clock.frozen_at === null ? now + Number(clock.offset_ms) : Number(clock.frozen_at);
      const cutoff = new Date(keyNow - retentionMs).toISOString();
      const endpoints = db.selectFrom('webhook_endpoints').select('id').where('api_key_id', '=', clock.api_key_id);
      const pending = db
        .selectFrom('webhook_deliveries')
        .select('event_seq')
        .where('state', '=', 'pending')
        .where('endpoint_id', 'in', endpoints);
      const deliveries = await db
        .deleteFrom('webhook_deliveries')
        .where('endpoint_id', 'in', endpoints)
        .where('state', '<>', 'pending')
        .where('created_at', '<', cutoff)
        .executeTakeFirst();
      const events = await db
        .deleteFrom('events')
        .where('api_key_id', '=', clock.api_key_id)
        .where('created_at', '<', cutoff)
        .where('seq', 'not in', pending)
        .executeTakeFirst();
      deleted += Number(deliveries.numDeletedRows) + Number(events.numDeletedRows);
    }
    return deleted;
  }

  async #expire(table: 'events' | 'webhook_deliveries', cutoff: string): Promise<number> {
    const { db } = this.deps;
    const clocked = db.selectFrom('test_clocks').select('api_key_id');
    let deleted = 0;
    await this.#job.pass(async (size) => {
      let query = db.selectFrom(table).select(['seq', 'created_at']).orderBy('seq').limit(size);
      query =
        table === 'events'
          ? query.where('api_key_id', 'not in', clocked)
          : query.where(
              'endpoint_id',
              'not in',
              db.selectFrom('webhook_endpoints').select('id').where('api_key_id', 'in', clocked),
            );
      const oldest = await query.execute();
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
