import type { PageRequest, Rows } from '../db/keyset.js';
import { ProblemError } from './problems.js';

/** What every cursor starts with, before base64url: its version. */
const PREFIX = 'v1:';

/**
 * The cursor of keyset pagination (db/keyset.ts): opaque to clients, it names the last id of the page
 * before. A page holds the items after it, so no item is skipped or repeated between pages.
 */
export function encodeCursor(lastId: number): string {
  return Buffer.from(`${PREFIX}${lastId}`).toString('base64url');
}

export function pageRequest(query: { limit?: number; cursor?: string }): PageRequest {
  return { afterId: query.cursor === undefined ? 0 : decodeCursor(query.cursor), limit: query.limit ?? 20 };
}

function decodeCursor(cursor: string): number {
  const text = Buffer.from(cursor, 'base64url').toString();
  const id = Number(text.slice(PREFIX.length));
  // Node's decoder skips characters outside the alphabet; only a cursor we would issue is accepted.
  const issued = /^\d+$/.test(text.slice(PREFIX.length)) && Number.isSafeInteger(id) && encodeCursor(id) === cursor;
  if (!text.startsWith(PREFIX) || !issued) {
    throw new ProblemError('invalid-request', 'The cursor is not one this API issued.', {
      errors: [{ in: 'query', name: 'cursor', message: 'must be the nextCursor of a previous page' }],
    });
  }
  return id;
}

/** The page a list operation answers: the cursor, when more follow, points after the last row. */
export function pageOf<T extends { id: number }>({ rows, more }: Rows<T>): { data: T[]; nextCursor: string | null } {
  const last = rows[rows.length - 1];
  return { data: rows, nextCursor: more && last ? encodeCursor(last.id) : null };
}
