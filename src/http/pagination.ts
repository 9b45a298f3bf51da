import { ProblemError } from './problems.js';

/**
 * Keyset pagination over ascending ids: a page holds the items after the cursor's id, so no item is
 * skipped or repeated however the collection changes between pages. The cursor is opaque to clients.
 */
export interface PageRequest {
  afterId: number;
  limit: number;
}

const PREFIX = 'v1:';

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

/** Rows are fetched one beyond the limit: the extra row only says whether another page exists. */
export function toPage<T extends { id: number }>(rows: T[], limit: number): { data: T[]; nextCursor: string | null } {
  const data = rows.slice(0, limit);
  const last = data[data.length - 1];
  return { data, nextCursor: rows.length > limit && last ? encodeCursor(last.id) : null };
}
