import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { inject } from 'vitest';
import type { DatabaseConfig } from '../../src/db/database.js';
import { type Db, openDatabase } from '../../src/db/database.js';
import { migrate } from '../../src/db/migrations.js';

/** Which store the API suites run on: the vitest project sets TEST_STORE (see vitest.config.ts). */
export const TEST_STORE: DatabaseConfig['kind'] = process.env.TEST_STORE === 'postgres' ? 'postgres' : 'sqlite';

export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';

export interface TestDatabase {
  db: Db;
  /** What a separate process (the CLI, a server) sets as DATABASE_URL to share this store. */
  url: string;
  config: DatabaseConfig;
  /** Drops what the test created (a PostgreSQL schema). */
  drop(): Promise<void>;
}

/**
 * A fresh, migrated store of the suite's kind; `connectVia` reaches the same PostgreSQL another way
 * (through a proxy a test can cut). In SQLite's memory, migrating takes milliseconds. On PostgreSQL each
 * store is a database of its own, copied from the run's migrated template (../setup/postgres.ts):
 * suites running side by side never see each other's rows, and a copy costs a fraction of migrating.
 */
const SQLITE_CURSOR_SECRET = randomBytes(32).toString('base64');

export async function testDatabase({
  kind = TEST_STORE,
  sqliteFile = ':memory:',
  connectVia = TEST_DATABASE_URL,
} = {}): Promise<TestDatabase> {
  if (kind === 'sqlite') {
    const config: DatabaseConfig = { kind, file: sqliteFile };
    const db = openDatabase(config);
    await migrate(db, kind);
    // One cursor secret for every SQLite store of the run, as copies of one template share theirs on
    // PostgreSQL: two apps built side by side (the entrances compared) sign the same cursors.
    await db
      .updateTable('service_secrets')
      .set({ value: SQLITE_CURSOR_SECRET })
      .where('name', '=', 'cursors')
      .execute();
    return { db, url: sqliteFile, config, drop: async () => {} };
  }
  const { url, drop } = await postgresDatabase(connectVia);
  const config: DatabaseConfig = { kind, url };
  return { db: openDatabase(config), url, config, drop };
}

/** A new database on the PostgreSQL at `base`, a copy of the run's migrated template; `drop` removes it. */
async function postgresDatabase(base: string): Promise<{ url: string; drop(): Promise<void> }> {
  const template = inject('postgresTemplate');
  if (!template) throw new Error('no PostgreSQL template: the project needs test/setup/postgres.ts as a global set-up');
  const name = `petstore_test_${randomBytes(6).toString('hex')}`;
  await admin(`create database ${name} template ${template}`, base);
  const url = new URL(base);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => admin(`drop database if exists ${name} with (force)`, base) };
}

/** A schema of its own on the PostgreSQL at `base`, reached through `search_path`; `drop` removes it. */
export async function postgresSchema(base: string, label = 'test'): Promise<{ url: string; drop(): Promise<void> }> {
  const schema = `${label}_${randomBytes(6).toString('hex')}`;
  await admin(`create schema ${schema}`, base);
  return { url: withSearchPath(base, schema), drop: () => admin(`drop schema if exists ${schema} cascade`, base) };
}

export function withSearchPath(url: string, schema: string): string {
  const parsed = new URL(url);
  parsed.searchParams.set('options', `-c search_path=${schema}`);
  return parsed.toString();
}

export async function admin(statement: string, url = TEST_DATABASE_URL): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

/** Whether PostgreSQL answers; in CI it must, so a missing server fails instead of skipping. */
export async function postgresAvailable(): Promise<boolean> {
  try {
    await admin('select 1');
    return true;
  } catch (error) {
    if (process.env.CI === 'true') throw error;
    console.warn(`PostgreSQL suites skipped: ${TEST_DATABASE_URL} does not answer (${String(error)})`);
    return false;
  }
}

declare module 'vitest' {
  export interface ProvidedContext {
    /**
     * The migrated database that each test's PostgreSQL store copies; null where PostgreSQL is not there (outside CI).
     */
    postgresTemplate: string | null;
  }
}
