import { sql } from 'kysely';
import type { Db } from './database.js';

/**
 * On PostgreSQL the store's trigger takes a key's transaction lock before it writes the key's event
 * (migration 005), so that a key's events are chained in the order they are written. A transaction
 * that writes events for several keys at once (the fulfilment's batch) takes their locks first, in
 * the order of their lock numbers, as every such writer does: two of them never wait for each other
 * in a circle. The trigger's own take is then one the transaction already holds. The store's, beside its
 * trigger (./triggers.ts): events/record.ts and orders/moves.ts both take them.
 */
export async function lockEventKeys(trx: Db, owners: readonly string[]): Promise<void> {
  await sql`select pg_advisory_xact_lock(h) from (select distinct hashtextextended(k, 0) as h from unnest(${[...owners]}::text[]) as k order by h) as locks`.execute(
    trx,
  );
}
