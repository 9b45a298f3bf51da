import { randomBytes } from 'node:crypto';
import type { Kysely, Migration } from 'kysely';

/** The migrations of test keys' own time and children (test-mode/): the same on both stores. */

export const testClocks: Migration = {
  // A test key's clock, when a test moved it (clock.ts `KeyClock`,
  // docs/testing-clients.md#testing-your-client-in-seconds): ms, as the clock keeps them.
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('test_clocks')
      .addColumn('api_key_id', 'text', (c) => c.primaryKey().references('api_keys.id'))
      .addColumn('offset_ms', 'bigint', (c) => c.notNull())
      .addColumn('frozen_at', 'bigint')
      .execute();
  },
};

export const childTestKeys: Migration = {
  // A test key's children (test-mode/test-keys.ts, docs/testing-clients.md#testing-your-client-in-seconds), and the
  // secret their keys are derived with when asked for with an Idempotency-Key (a replay shows the same key without it
  // being stored).
  async up(db: Kysely<unknown>) {
    await db.schema
      .alterTable('api_keys')
      .addColumn('parent_id', 'text', (c) => c.references('api_keys.id'))
      .execute();
    await db.schema.createIndex('api_keys_parent_id').on('api_keys').column('parent_id').execute();
    await db
      .insertInto('service_secrets' as never)
      .values({ name: 'test-keys', value: randomBytes(32).toString('base64') } as never)
      .execute();
  },
};

export const testScripts: Migration = {
  // A test key's script (scenarios/, docs/testing-clients.md#scenarios-a-test-can-count-on): its steps as armed,
  // the step in use and how many times it was used, the arming it belongs to; and each use, in order.
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('test_scripts')
      .addColumn('api_key_id', 'text', (c) => c.primaryKey().references('api_keys.id'))
      .addColumn('scenario', 'text')
      .addColumn('steps', 'text', (c) => c.notNull())
      .addColumn('position', 'integer', (c) => c.notNull())
      .addColumn('uses', 'integer', (c) => c.notNull())
      .addColumn('armed', 'integer', (c) => c.notNull())
      .execute();
    await db.schema
      .createTable('test_script_uses')
      .addColumn('api_key_id', 'text', (c) => c.notNull().references('api_keys.id'))
      .addColumn('seq', 'integer', (c) => c.notNull())
      .addColumn('step', 'integer', (c) => c.notNull())
      .addColumn('request_id', 'text', (c) => c.notNull())
      .addColumn('at', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('test_script_uses_pkey', ['api_key_id', 'seq'])
      .execute();
  },
};
