/**
 * What the stores' errors mean, whichever dialect raised them: the error codes of PostgreSQL, SQLite
 * and the network are written down here and nowhere else.
 */

/** The embedded store's files were deleted or replaced under the running service (./store-files.ts). */
const STORE_MOVED = 'PETSTORE_STORE_MOVED';

const UNREACHABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EHOSTUNREACH',
  '57P01',
  '57P03',
  STORE_MOVED,
]);

/** PostgreSQL's unique_violation. */
const UNIQUE_VIOLATION_CODES = new Set(['23505']);

/**
 * SQLite's result codes, as node:sqlite gives them (`errcode`, with `code` 'ERR_SQLITE_ERROR'): the
 * primary code is the low byte of an extended one.
 */
const SQLITE = { busy: 5, cantOpen: 14, constraintPrimaryKey: 1555, constraintUnique: 2067 } as const;

function sqliteCode(error: unknown): number | undefined {
  const e = error as { code?: string; errcode?: number } | null;
  return e?.code === 'ERR_SQLITE_ERROR' ? e.errcode : undefined;
}

/** True for errors that mean "the store cannot be reached now" (a `503`), not "the request is wrong". */
export function isStoreUnavailable(error: unknown): boolean {
  const e = error as { code?: string; message?: string } | null;
  if (!e) return false;
  if (e.code && UNREACHABLE_CODES.has(e.code)) return true;
  const primary = (sqliteCode(error) ?? 0) & 0xff;
  if (primary === SQLITE.busy || primary === SQLITE.cantOpen) return true;
  return /timeout exceeded when trying to connect|Connection terminated|connect ECONNREFUSED/.test(e.message ?? '');
}

/** True when a write lost to a row with the same key (another writer got there first). */
export function isUniqueViolation(error: unknown): boolean {
  const code = (error as { code?: string } | null)?.code;
  if (code !== undefined && UNIQUE_VIOLATION_CODES.has(code)) return true;
  const sqlite = sqliteCode(error);
  return sqlite === SQLITE.constraintPrimaryKey || sqlite === SQLITE.constraintUnique;
}

/**
 * Raised for every read of an embedded store whose files were deleted
 * or replaced: only a restart opens the files the path now names.
 */
export class StoreMovedError extends Error {
  readonly code = STORE_MOVED;
  constructor() {
    super("the SQLite store's files were deleted or replaced under the running service; restart it");
  }
}
