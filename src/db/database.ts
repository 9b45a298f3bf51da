import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { Kysely, PostgresDialect, sql } from 'kysely';
import { namedStatementsPool } from './named-statements.js';
import pg from 'pg';
import type { Database } from './schema.js';
import { StoreMovedError } from './errors.js';
import { StoreFiles } from './store-files.js';
import { type Connection, EmbeddedDialect, fileOf, forKysely, openConnection, pragma } from './sqlite.js';

export type Db = Kysely<Database>;

/** Which store (DATABASE_URL): a SQLite file, embedded, or a PostgreSQL server. */
export type DatabaseConfig = { kind: 'sqlite'; file: string } | { kind: 'postgres'; url: string };

/** The SQLite connection under each embedded store, for what Kysely does not expose (see ./change-feed.ts). */
const sqliteHandles = new WeakMap<Db, Connection>();

export function sqliteHandleOf(db: Db): Connection {
  const handle = sqliteHandles.get(db);
  if (!handle) throw new Error('not a SQLite store opened by openDatabase');
  return handle;
}

/** The files of each embedded store kept in a file, watched for being deleted or replaced (./store-files.ts). */
const watchedFiles = new WeakMap<Db, StoreFiles>();

/**
 * Whether the embedded store's files were deleted or replaced
 * under the service: then nothing it reads is true any more.
 */
export function storeMoved(db: Db): boolean {
  return watchedFiles.get(db)?.moved ?? false;
}

/** Looks at the embedded store's files now, as the watch does every `WATCH_MS`. */
export function lookAtStoreFiles(db: Db): void {
  watchedFiles.get(db)?.look();
}

/** Whether an SQLite connection's store keeps a write-ahead log (a file in WAL mode; not one in memory). */
export function hasWriteAheadLog(connection: Connection): boolean {
  return fileOf(connection) !== null && String(pragma(connection, 'journal_mode')).toLowerCase() === 'wal';
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
  // Writers queue for up to 5 s (the CLI beside the server) instead of failing.
  const database = openConnection(file, 5_000);
  // WAL lets the CLI write while the server reads.
  database.exec('PRAGMA journal_mode = WAL');
  // In WAL mode NORMAL syncs at checkpoints, not at every commit: a committed transaction survives the
  // process being killed (it is in the WAL, with the OS), and a power loss can cost the last ones
  // committed before it, never the store's consistency. FULL would make every order wait for a disk sync.
  database.exec('PRAGMA synchronous = NORMAL');
  database.exec('PRAGMA foreign_keys = ON');
  // A first read creates the `-wal` and `-shm` files, so that all three are known from the start.
  database.prepare('SELECT count(*) FROM sqlite_master').get();
  const files = StoreFiles.watch(database);
  // Every query of the store, whoever sends it: none reads or
  // writes files that are no longer the store's (./store-files.ts).
  const refuseMoved = () => {
    if (files?.moved) throw new StoreMovedError();
  };
  const db = new Kysely<Database>({ dialect: new EmbeddedDialect({ database: forKysely(database, refuseMoved) }) });
  sqliteHandles.set(db, database);
  if (files) watchedFiles.set(db, files);
  return db;
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
