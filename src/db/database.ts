import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect, type SqliteDatabase, sql } from 'kysely';
import { namedStatementsPool } from './named-statements.js';
import pg from 'pg';
import type { DatabaseConfig } from '../config.js';
import type { Database } from './schema.js';
import { StoreMovedError } from './errors.js';
import { StoreFiles } from './store-files.js';

export type Db = Kysely<Database>;

/** The SQLite connection under each embedded store, for what Kysely does not expose (see ./change-feed.ts). */
const sqliteHandles = new WeakMap<Db, SQLite.Database>();

export function sqliteHandleOf(db: Db): SQLite.Database {
  const handle = sqliteHandles.get(db);
  if (!handle) throw new Error('not a SQLite store opened by openDatabase');
  return handle;
}

/** The files of each embedded store kept in a file, watched for being deleted or replaced (./store-files.ts). */
const watchedFiles = new WeakMap<Db, StoreFiles>();

/** Whether the embedded store's files were deleted or replaced under the service: then nothing it reads is true any more. */
export function storeMoved(db: Db): boolean {
  return watchedFiles.get(db)?.moved ?? false;
}

/** Looks at the embedded store's files now, as the watch does every `WATCH_MS`. */
export function lookAtStoreFiles(db: Db): void {
  watchedFiles.get(db)?.look();
}

/** Whether an SQLite connection's store keeps a write-ahead log (a file in WAL mode; not one in memory). */
export function hasWriteAheadLog(connection: SQLite.Database): boolean {
  return !connection.memory && String(connection.pragma('journal_mode', { simple: true })).toLowerCase() === 'wal';
}

/** Whether `db` is the embedded store (SQLite): one connection, in this process. */
export function isEmbedded(db: Db): boolean {
  return sqliteHandles.has(db);
}

/** Opens the store named by the configuration. Everything above this line is dialect-free. */
export function openDatabase(config: DatabaseConfig): Db {
  return config.kind === 'sqlite' ? openSqlite(config.file) : openPostgres(config.url);
}

function openSqlite(file: string): Db {
  if (file !== ':memory:') mkdirSync(dirname(file), { recursive: true });
  const database = new SQLite(file);
  // WAL lets the CLI write while the server reads; busy_timeout makes writers queue instead of failing.
  database.pragma('journal_mode = WAL');
  // In WAL mode NORMAL syncs at checkpoints, not at every commit: a committed transaction survives the
  // process being killed (it is in the WAL, with the OS), and a power loss can cost the last ones
  // committed before it, never the store's consistency. FULL would make every order wait for a disk sync.
  database.pragma('synchronous = NORMAL');
  database.pragma('busy_timeout = 5000');
  database.pragma('foreign_keys = ON');
  // A first read creates the `-wal` and `-shm` files, so that all three are known from the start.
  database.prepare('SELECT count(*) FROM sqlite_master').get();
  const files = StoreFiles.watch(database);
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: reusingStatements(database, files) }) });
  sqliteHandles.set(db, database);
  if (files) watchedFiles.set(db, files);
  return db;
}

/**
 * The connection as Kysely's SQLite dialect takes it (its documented `SqliteDatabase`: `prepare` and
 * `close`), with each statement compiled once and reused. Kysely prepares every query anew, and
 * compiling a statement costs SQLite more than running it; the service sends a few dozen distinct
 * statements. A cached statement cannot run twice at once through `iterate` (Kysely's `stream`),
 * which nothing here uses.
 */
function reusingStatements(database: SQLite.Database, files: StoreFiles | null): SqliteDatabase {
  const cache = new Map<string, SQLite.Statement>();
  return {
    prepare(source) {
      // Every query of the store, whoever sends it (a request, the admin API, a job): none reads or
      // writes files that are no longer the store's (./store-files.ts).
      if (files?.moved) throw new StoreMovedError();
      let statement = cache.get(source);
      if (!statement) {
        // Bounded, should some query's text ever vary (an IN list of varying length).
        if (cache.size >= 500) cache.clear();
        statement = database.prepare(source);
        cache.set(source, statement);
      }
      return statement;
    },
    close: () => database.close(),
  };
}

function openPostgres(url: string): Db {
  // int8 (ids) as numbers: ids stay far below 2^53, and records promise JSON numbers.
  pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value));
  const pool = new pg.Pool({ connectionString: url, max: 10, connectionTimeoutMillis: 2_000 });
  // A client that loses its connection emits 'error' (on the pool when idle, on the client itself in
  // between); an unheard 'error' would crash the process. The failed query itself still rejects.
  pool.on('error', () => {});
  pool.on('connect', (client) => client.on('error', () => {}));
  return new Kysely<Database>({ dialect: new PostgresDialect({ pool: namedStatementsPool(pool) }) });
}

/** PostgreSQL's schema in use: the first of `search_path` that exists. */
export async function currentSchema(db: Db): Promise<string> {
  const { rows } = await sql<{ schema: string | null }>`select current_schema() as schema`.execute(db);
  const schema = rows[0]?.schema;
  if (!schema) throw new Error('the PostgreSQL search_path names no schema that exists');
  return schema;
}

/**
 * Opens `connections` pool connections before the first request: a burst at start-up must not
 * queue behind connection set-up until it times out (a 503).
 */
export async function warmUp(db: Db, connections = 4): Promise<void> {
  await Promise.all(Array.from({ length: connections }, () => sql`select 1`.execute(db)));
}

/** True when the store answers a trivial query: what `/readyz` asks. */
export async function ping(db: Db): Promise<boolean> {
  if (storeMoved(db)) return false;
  try {
    await sql`select 1`.execute(db);
    return true;
  } catch {
    return false;
  }
}
