import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect, sql } from 'kysely';
import pg from 'pg';
import type { DatabaseConfig } from '../config.js';
import type { Database } from './schema.js';

export type Db = Kysely<Database>;

/** Opens the store named by the configuration. Everything above this line is dialect-free. */
export function openDatabase(config: DatabaseConfig): Db {
  return config.kind === 'sqlite' ? openSqlite(config.file) : openPostgres(config.url);
}

function openSqlite(file: string): Db {
  if (file !== ':memory:') mkdirSync(dirname(file), { recursive: true });
  const database = new SQLite(file);
  // WAL lets the CLI write while the server reads; busy_timeout makes writers queue instead of failing.
  database.pragma('journal_mode = WAL');
  database.pragma('busy_timeout = 5000');
  database.pragma('foreign_keys = ON');
  reusePreparedStatements(database);
  return new Kysely<Database>({ dialect: new SqliteDialect({ database }) });
}

/**
 * Kysely prepares every query anew, and compiling a statement costs SQLite more than running it (the
 * largest single item in the CPU profile of a request; see bench/). The service sends a few dozen
 * distinct statements, so each is compiled once and reused. A cached statement cannot run twice at
 * once through `iterate` (Kysely's `stream`), which nothing here uses.
 */
function reusePreparedStatements(database: SQLite.Database): void {
  const prepare = database.prepare.bind(database);
  const cache = new Map<string, SQLite.Statement>();
  database.prepare = ((source: string) => {
    let statement = cache.get(source);
    if (!statement) {
      // Bounded, should some query's text ever vary (an IN list of varying length).
      if (cache.size >= 500) cache.clear();
      statement = prepare(source);
      cache.set(source, statement);
    }
    return statement;
  }) as typeof database.prepare;
}

function openPostgres(url: string): Db {
  // int8 (ids) as numbers: ids stay far below 2^53, and records promise JSON numbers.
  pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value));
  const pool = new pg.Pool({ connectionString: url, max: 10, connectionTimeoutMillis: 2_000 });
  // A client that loses its connection emits 'error' (on the pool when idle, on the client itself in
  // between); an unheard 'error' would crash the process. The failed query itself still rejects.
  pool.on('error', () => {});
  pool.on('connect', (client) => client.on('error', () => {}));
  return new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
}

/** True when the store answers a trivial query: what `/readyz` asks. */
export async function ping(db: Db): Promise<boolean> {
  try {
    await sql`select 1`.execute(db);
    return true;
  } catch {
    return false;
  }
}

const UNREACHABLE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'ENOTFOUND', 'EHOSTUNREACH', '57P01', '57P03', 'SQLITE_BUSY', 'SQLITE_CANTOPEN']);

/** True for errors that mean "the store cannot be reached now" (a `503`), not "the request is wrong". */
export function isStoreUnavailable(error: unknown): boolean {
  const e = error as { code?: string; message?: string } | null;
  if (!e) return false;
  if (e.code && UNREACHABLE_CODES.has(e.code)) return true;
  return /timeout exceeded when trying to connect|Connection terminated|connect ECONNREFUSED/.test(e.message ?? '');
}
