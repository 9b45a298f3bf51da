import type { FastifyReply, FastifyRequest } from 'fastify';
import { LIMIT_HEADER, POLICY_HEADER, RATE_LIMIT_HEADER, REMAINING_HEADER, RESET_HEADER, RETRY_AFTER_HEADER } from '../ratelimit/headers.js';
import { IDEMPOTENT_REPLAYED_HEADER } from '../orders/schemas.js';
import { DEPRECATION_HEADER, LINK_HEADER, SUNSET_HEADER } from '../pets/deprecation.js';
import { REQUEST_ID_HEADER } from './request-id.js';

/**
 * Browsers on any origin may call the API (API clients, docs tools, notebooks): keys travel in a
 * header, never in cookies, so `*` lends nothing to another site. Browsers only let scripts read the
 * response headers listed here, so the rate-limit and deprecation headers are exposed.
 */
export const ALLOW_ORIGIN_HEADER = 'Access-Control-Allow-Origin';

const EXPOSED = [
  LIMIT_HEADER, REMAINING_HEADER, RESET_HEADER, POLICY_HEADER, RATE_LIMIT_HEADER, RETRY_AFTER_HEADER,
  REQUEST_ID_HEADER, 'Location', DEPRECATION_HEADER, SUNSET_HEADER, LINK_HEADER, IDEMPOTENT_REPLAYED_HEADER,
].join(', ');

/** The headers of every response. */
export const CORS_HEADERS: Readonly<Record<string, string>> = { [ALLOW_ORIGIN_HEADER]: '*', 'Access-Control-Expose-Headers': EXPOSED };

export function cors(_request: FastifyRequest, reply: FastifyReply): void {
  reply.headers(CORS_HEADERS);
}

/**
 * A preflight (OPTIONS with Access-Control-Request-Method) is answered here, after the rate-limit
 * step like every request, before any route could answer 405.
 */
export function answerPreflight(request: FastifyRequest, reply: FastifyReply): void {
  if (request.method !== 'OPTIONS' || !request.headers['access-control-request-method']) return;
  reply
    .code(204)
    .header('Access-Control-Allow-Methods', 'GET, HEAD, POST, DELETE')
    .header('Access-Control-Allow-Headers', 'X-API-Key, Content-Type, Idempotency-Key, X-Request-Id')
    .header('Access-Control-Max-Age', '600')
    .send();
}
