import type { PageRequest, Rows } from '../db/keyset.js';
import { ProblemError } from './problems.js';

/** What every cursor starts with, before base64url: its version. */
const PREFIX = 'v1:';

/**
 * The cursor of keyset pagination (db/keyset.ts): opaque to clients, it names the position (the id, or
 * for events their order of writing) of the last item of the page before. A page holds the items after
 * it in the listing's order, so no item is skipped or repeated between pages.
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
export function pageOf<T extends { id: number }>(rows: Rows<T>): { data: T[]; nextCursor: string | null } {
  return pageWith(
    rows,
    (row) => row.id,
    (row) => row,
  );
}

/** The same, for rows whose place in the listing is not their id: `positionOf` names it, `itemOf` the item shown. */
export function pageWith<R, T>({ rows, more }: Rows<R>, positionOf: (row: R) => number, itemOf: (row: R) => T): { data: T[]; nextCursor: string | null } {
  const last = rows[rows.length - 1];
  return { data: rows.map(itemOf), nextCursor: more && last ? encodeCursor(positionOf(last)) : null };
}
