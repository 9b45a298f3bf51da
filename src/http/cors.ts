import type { FastifyReply, FastifyRequest } from 'fastify';
import { fieldNames } from './field-name.js';
import { setHeaders } from './steps.js';

/**
 * Browsers on any origin may call the API (API clients, docs tools, notebooks): keys travel in a
 * header, never in cookies, so `*` lends nothing to another site.
 */
export const ALLOW_ORIGIN_HEADER = 'Access-Control-Allow-Origin';

/**
 * Every response header is readable by scripts: `*`, which browsers honour for a request without
 * credentials (Fetch standard), and with `Access-Control-Allow-Origin: *` none has them. One short
 * header instead of a list of names (the rate-limit headers, deprecation, ETag, …) that every response
 * carried, and that a new header had to join to be seen.
 */
const EXPOSE_ALL = '*';

/**
 * What the app lets browsers send; the lists are assembled where
 * the app is wired (app.ts), from each component's header names.
 */
export interface CorsLists {
  /** Request headers a script may send. */
  allowed: readonly string[];
  methods: readonly string[];
}

/** The CORS headers of every response, the step that sets them, and the answer to a preflight. */
export function corsPolicy({ allowed, methods }: CorsLists) {
  const headers = fieldNames({ [ALLOW_ORIGIN_HEADER]: '*', 'Access-Control-Expose-Headers': EXPOSE_ALL });
  const preflightHeaders = {
    'Access-Control-Allow-Methods': methods.join(', '),
    'Access-Control-Allow-Headers': allowed.join(', '),
    'Access-Control-Max-Age': '600',
  };
  return {
    headers,
    /** The step that gives every response its CORS headers. */
    cors(_request: FastifyRequest, reply: FastifyReply): void {
      setHeaders(reply, headers);
    },
    /**
     * A preflight (OPTIONS with Access-Control-Request-Method) is answered here, after the rate-limit
     * step like every request, before any route could answer 405.
     */
    answerPreflight(request: FastifyRequest, reply: FastifyReply): FastifyReply | undefined {
      if (request.method !== 'OPTIONS' || !request.headers['access-control-request-method']) return undefined;
      return setHeaders(reply.code(204), preflightHeaders).send();
    },
  };
}
