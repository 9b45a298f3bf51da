import { fieldNames } from './field-name.js';
import { type Phases, setHeaders, type Stage } from './stages.js';

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

/**
 * The CORS stage: a preflight (OPTIONS with Access-Control-Request-Method) is answered after the limit
 * stage, like every request, before any route could answer `405`; and every answer carries the headers.
 */
export function corsStage({ allowed, methods }: CorsLists): Stage {
  const headers = fieldNames({ [ALLOW_ORIGIN_HEADER]: '*', 'Access-Control-Expose-Headers': EXPOSE_ALL });
  const preflightHeaders = {
    'Access-Control-Allow-Methods': methods.join(', '),
    'Access-Control-Allow-Headers': allowed.join(', '),
    'Access-Control-Max-Age': '600',
  };
  const phases: Phases = {
    onRequest(request, reply) {
      if (request.method !== 'OPTIONS' || !request.headers['access-control-request-method']) return undefined;
      return setHeaders(reply.code(204), preflightHeaders).send();
    },
    onSend(_request, reply, payload) {
      setHeaders(reply, headers);
      return payload;
    },
  };
  return { name: 'cors', forRoute: () => phases };
}
