import { createHmac, createSecretKey, type KeyObject, timingSafeEqual } from 'node:crypto';
import type { PageRequest, Rows } from '../page.js';
import { ProblemError } from './problems.js';

/** How many bytes of the HMAC a cursor carries: enough that guessing one is hopeless. */
const MAC_BYTES = 16;

/**
 * The cursors of collections (docs/calling-the-api.md#collections-and-pagination): opaque to clients, each names the
 * position of the last item of the page before (an id, or for events their order of writing) and is signed, with a
 * secret every instance on the store shares, together with its scope: the key, the collection and the filters
 * that produced it. A cursor this API never issued, or issued for another key, collection or filter,
 * is a `400`. A page holds the items after its position in the listing's order (db/keyset.ts), so no
 * item is skipped or repeated between pages.
 */
export class Cursors {
  /** Imported once: an HMAC keyed by bytes imports them again at every call, a cost every cursor would pay. */
  readonly #key: KeyObject;

  constructor(secret: Buffer) {
    this.#key = createSecretKey(secret);
  }

  /** The cursor after `position` in the listing `scope` names. */
  encode(position: string | number, scope: string): string {
    const text = String(position);
    return Buffer.concat([this.#mac(scope, text), Buffer.from(text)]).toString('base64url');
  }

  /** The position a cursor names, if this API issued it for `scope`; else a `400`. */
  decode(cursor: string, scope: string): string {
    const bytes = Buffer.from(cursor, 'base64url');
    const text = bytes.subarray(MAC_BYTES).toString();
    // Node's decoder skips characters outside the alphabet: only the very text issued is accepted.
    const issued =
      bytes.length > MAC_BYTES &&
      bytes.toString('base64url') === cursor &&
      timingSafeEqual(bytes.subarray(0, MAC_BYTES), this.#mac(scope, text));
    if (!issued) throw notIssued();
    return text;
  }

  /** The page a request asks for, in a listing by number (`afterId`: 0 for the first page). */
  pageRequest(query: { limit?: number; cursor?: string }, scope: string): PageRequest {
    const limit = query.limit ?? 20;
    if (query.cursor === undefined) return { afterId: 0, limit };
    const position = this.decode(query.cursor, scope);
    const afterId = Number(position);
    if (!/^[1-9][0-9]*$/.test(position) || !Number.isSafeInteger(afterId)) throw notIssued();
    return { afterId, limit };
  }

  /** The page a list operation answers: the cursor, when more follow, points after the last row. */
  pageOf<T extends { id: number }>(rows: Rows<T>, scope: string): { data: T[]; nextCursor: string | null } {
    const last = rows.rows.at(-1);
    return { data: rows.rows, nextCursor: rows.more && last ? this.encode(last.id, scope) : null };
  }

  #mac(scope: string, position: string): Buffer {
    return createHmac('sha256', this.#key).update(`${scope}\n${position}`).digest().subarray(0, MAC_BYTES);
  }
}

/**
 * A listing's scope: the collection, the key reading it, and its
 * filters as sent (absent ones empty, several values in order).
 */
export function scopeOf(
  collection: string,
  keyId: string,
  filters: Record<string, string | number | readonly string[] | undefined> = {},
): string {
  const parts = Object.entries(filters).map(
    ([name, value]) => `${name}=${Array.isArray(value) ? [...new Set(value)].sort().join(',') : (value ?? '')}`,
  );
  return [collection, keyId, ...parts].join('\n');
}

function notIssued(): ProblemError {
  return new ProblemError(
    'invalid-request',
    'The cursor is not one this API issued for this listing: it belongs to the same key, collection and filters as ' +
      'the page that gave it.',
    {
      errors: [
        { in: 'query', name: 'cursor', message: 'must be the nextCursor of a previous page of the same listing' },
      ],
    },
  );
}
