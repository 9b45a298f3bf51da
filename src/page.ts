/**
 * A page of a collection, as the store reads it (db/keyset.ts) and the edge turns it into cursors
 * (http/pagination.ts): what is asked, and what is found. A neutral leaf beside clock.ts, so that neither the
 * store nor the edge reaches into the other for it.
 */

/** The rows after `afterId`, at most `limit` of them. */
export interface PageRequest {
  afterId: number;
  limit: number;
}

/** What a repository answers for a page request: the rows of the page, and whether more follow them. */
export interface Rows<T> {
  rows: T[];
  more: boolean;
}
