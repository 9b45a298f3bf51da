import { ProblemError } from '../http/problems.js';
import { ENDPOINT_ID_PATTERN } from './schemas.js';

/**
 * The cursor of the endpoints' collection: endpoints are listed in the order of their ids, and a
 * cursor names the last id of the page before (opaque to clients, as every cursor).
 */
const PREFIX = 'e1:';

export function textCursorOf(id: string): string {
  return Buffer.from(`${PREFIX}${id}`).toString('base64url');
}

export function textPageRequest(query: { limit?: number; cursor?: string }): { after: string; limit: number } {
  const limit = query.limit ?? 20;
  if (query.cursor === undefined) return { after: '', limit };
  const text = Buffer.from(query.cursor, 'base64url').toString();
  const id = text.slice(PREFIX.length);
  if (!text.startsWith(PREFIX) || !new RegExp(ENDPOINT_ID_PATTERN).test(id) || textCursorOf(id) !== query.cursor) {
    throw new ProblemError('invalid-request', 'The cursor is not one this API issued.', {
      errors: [{ in: 'query', name: 'cursor', message: 'must be the nextCursor of a previous page' }],
    });
  }
  return { after: id, limit };
}
