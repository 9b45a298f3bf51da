import type { Kysely, Migration } from 'kysely';
import type { Dialect } from './migration-dialect.js';

/**
 * A test key's request log (request-log/): each exchange as one row, its entry as JSON, with what a listing filters
 * and orders by beside it. The newest 1,000 of a key are kept.
 */
export const requestLog = (d: Dialect): Migration => ({
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('request_log')
      .addColumn('seq', d.serialId, d.serialKey)
      .addColumn('api_key_id', 'text', (c) => c.notNull())
      .addColumn('request_id', 'text', (c) => c.notNull())
      // ms since the epoch (real time): the order of the listing, newest first.
      .addColumn('received_at', 'bigint', (c) => c.notNull())
      .addColumn('method', 'text', (c) => c.notNull())
      .addColumn('path', 'text', (c) => c.notNull())
      .addColumn('status', 'integer')
      // The checks the request touched, as `,id,` runs, for the `check` filter.
      .addColumn('checks', 'text', (c) => c.notNull())
      .addColumn('entry', 'text', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('request_log_by_key')
      .on('request_log')
      .columns(['api_key_id', 'received_at', 'seq'])
      .execute();
  },
});
