import { type SelectQueryBuilder, sql } from 'kysely';

import type { PageRequest, Rows } from '../page.js';

/**
 * Keyset pagination over ascending ids: a page holds the rows after an id, so no row is skipped or
 * repeated however the table changes between pages. (How the id travels to clients, as a cursor, is the
 * HTTP API's business: http/pagination.ts; what a page request and a page of rows are: src/page.ts.)
 */
/**
 * Runs `query` (a table with an `id` column, filtered as the caller wants) for
 * one page: one row beyond the limit is read, only to say whether more follow.
 */
export async function pageOfRows<DB, TB extends keyof DB, O>(
  query: SelectQueryBuilder<DB, TB, O>,
  page: PageRequest,
): Promise<Rows<O>> {
  const fetched = await query
    .where(sql.ref('id'), '>', page.afterId)
    .orderBy(sql.ref('id'))
    .limit(page.limit + 1)
    .execute();
  return { rows: fetched.slice(0, page.limit), more: fetched.length > page.limit };
}
