import { type Db, isEmbedded } from '../db/database.js';
import { newNonce } from './ids.js';
import { lockEventKeys } from '../db/key-locks.js';
import type { Event, EventType } from './schemas.js';

/** An event that is not a move of an order (those the store writes itself: migration 005). */
export interface NewEvent {
  owner: string;
  type: Exclude<EventType, `order.${string}`>;
  livemode: boolean;
  data: Event['data'];
}

/**
 * Writes an event the service makes itself (`webhook.test`), in the caller's transaction, chained after
 * its key's newest as the store chains an order's (migration 005; on PostgreSQL under the key's lock).
 * Answers its `seq`.
 */
export class EventLog {
  readonly #locksKeys: boolean;

  constructor(db: Db) {
    this.#locksKeys = !isEmbedded(db);
  }

  async record(trx: Db, event: NewEvent, at: number): Promise<number> {
    if (this.#locksKeys) await lockEventKeys(trx, [event.owner]);
    const row = await trx
      .insertInto('events')
      .values({
        nonce: newNonce(),
        prev_seq: (eb) => eb.selectFrom('event_heads').select('last_seq').where('api_key_id', '=', event.owner),
        prev_of_order: null,
        api_key_id: event.owner,
        order_id: null,
        type: event.type,
        created_at: new Date(at).toISOString(),
        livemode: event.livemode ? 1 : 0,
        data: JSON.stringify(event.data),
      })
      .returning('seq')
      .executeTakeFirstOrThrow();
    return row.seq;
  }
}
