import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { type Db, isEmbedded } from '../db/database.js';
import { prepared } from '../db/prepared.js';
import type { Event, EventType } from './schemas.js';

/** An event to write: what happened, to whose order, with what data. */
export interface NewEvent {
  type: EventType;
  /** The key the event belongs to: the order's. */
  owner: string;
  orderId: number | null;
  livemode: boolean;
  data: Event['data'];
}

/** Rows a multi-row insert writes at most: its parameters stay far below every driver's limit. */
const ROWS_PER_INSERT = 500;

/**
 * Writes events in the caller's transaction, the transaction of the change they record (the
 * transactional outbox): a change committed has its event, and a change undone has none.
 *
 * For one key, events become visible in the order of their `seq`, which cursors page by: a client
 * that reads newest first down to the newest event it already has misses none. SQLite has one writer
 * at a time, so that holds by itself. On PostgreSQL a sequence value is taken at insert and becomes
 * visible at commit, so two transactions could commit in the other order; each writer first takes a
 * transaction lock on each key it writes for (advisory, in one global order: no deadlock), held to its
 * commit, so the next writer for that key takes its `seq` only after.
 */
export class EventLog {
  readonly #locksKeys: boolean;

  constructor(db: Db) {
    this.#locksKeys = !isEmbedded(db);
  }

  /** Writes `events`, all at `at`, in order, in `trx`; answers them as clients will read them. */
  async record(trx: Db, at: number, events: readonly NewEvent[]): Promise<Event[]> {
    if (events.length === 0) return [];
    if (this.#locksKeys) await lockKeys(trx, events);
    const timestamp = new Date(at).toISOString();
    const rows = events.map((event) => ({
      id: newEventId(),
      api_key_id: event.owner,
      order_id: event.orderId,
      type: event.type,
      created_at: timestamp,
      livemode: event.livemode ? 1 : 0,
      data: JSON.stringify(event.data),
    }));
    if (rows.length === 1) await insertEvent(trx, rows[0]!);
    else
      for (let i = 0; i < rows.length; i += ROWS_PER_INSERT)
        await trx
          .insertInto('events')
          .values(rows.slice(i, i + ROWS_PER_INSERT))
          .execute();
    return events.map((event, i) => ({ id: rows[i]!.id, type: event.type, timestamp, livemode: event.livemode, data: event.data }));
  }
}

export function newEventId(): string {
  return `evt_${randomBytes(12).toString('base64url')}`;
}

/** The transaction locks of the events' keys, in the order of their lock numbers. */
async function lockKeys(trx: Db, events: readonly NewEvent[]): Promise<void> {
  const owners = [...new Set(events.map((e) => e.owner))];
  await sql`select pg_advisory_xact_lock(h) from (select distinct hashtextextended(k, 0) as h from unnest(${owners}::text[]) as k order by h) as locks`.execute(
    trx,
  );
}

/** Every order placed writes one: compiled once, as the order's own insert is. */
const insertEvent = prepared(
  (db, row: { id: string; api_key_id: string; order_id: number | null; type: string; created_at: string; livemode: number; data: string }) =>
    db.insertInto('events').values({
      id: row.id,
      api_key_id: row.api_key_id,
      order_id: row.order_id,
      type: row.type,
      created_at: row.created_at,
      livemode: row.livemode,
      data: row.data,
    }),
);
