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
  'SQLITE_BUSY',
  'SQLITE_CANTOPEN',
  STORE_MOVED,
]);

/** PostgreSQL's unique_violation, and SQLite's for a primary key or a unique index. */
const UNIQUE_VIOLATION_CODES = new Set(['23505', 'SQLITE_CONSTRAINT_PRIMARYKEY', 'SQLITE_CONSTRAINT_UNIQUE']);

/** True for errors that mean "the store cannot be reached now" (a `503`), not "the request is wrong". */
export function isStoreUnavailable(error: unknown): boolean {
  const e = error as { code?: string; message?: string } | null;
  if (!e) return false;
  if (e.code && UNREACHABLE_CODES.has(e.code)) return true;
  return /timeout exceeded when trying to connect|Connection terminated|connect ECONNREFUSED/.test(e.message ?? '');
}

/** True when a write lost to a row with the same key (another writer got there first). */
export function isUniqueViolation(error: unknown): boolean {
  const code = (error as { code?: string } | null)?.code;
  return code !== undefined && UNIQUE_VIOLATION_CODES.has(code);
}

/** Raised for every read of an embedded store whose files were deleted or replaced: only a restart opens the files the path now names. */
export class StoreMovedError extends Error {
  readonly code = STORE_MOVED;
  constructor() {
    super("the SQLite store's files were deleted or replaced under the running service; restart it");
  }
}
