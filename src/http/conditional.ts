import { createHash } from 'node:crypto';
import type { Phases, Stage } from './stages.js';
import Type from 'typebox';
import { fieldName } from './field-name.js';

/**
 * Conditional reads (RFC 9110 §13): a route marked `config: { conditional: true }` answers its `200`
 * with an `ETag`, and a request whose `If-None-Match` names the current one gets `304 Not Modified`
 * with no body. A `304` to a valid key counts nothing (GitHub's rule: caching saves quota): the limit
 * stage (ratelimit/stage.ts) only looks at the limiter for such a request, and counts it at its
 * answer, after this stage has decided whether it is a `304`.
 */
declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route's `200` carries an `ETag` and honours `If-None-Match`. */
    conditional?: boolean;
  }
}

export const ETAG_HEADER = 'ETag';
/** The name as set on an answer (./field-name.ts). */
export const ETAG_FIELD = fieldName(ETAG_HEADER);
export const IF_NONE_MATCH_HEADER = 'If-None-Match';
export const IF_NONE_MATCH_FIELD = IF_NONE_MATCH_HEADER.toLowerCase();

/** A strong validator of a representation: a digest of its bytes (the same body, the same tag, on every instance). */
export function etagOf(body: string): string {
  return `"${createHash('sha1').update(body).digest('base64url')}"`;
}

/** Whether `If-None-Match` names `etag` (weak comparison, RFC 9110 §13.1.2), or is `*`. */
export function noneMatchHolds(ifNoneMatch: string, etag: string): boolean {
  if (ifNoneMatch.trim() === '*') return true;
  const opaque = etag.slice(etag.indexOf('"'));
  return ifNoneMatch.split(',').some((candidate) => {
    const tag = candidate.trim();
    return (tag.startsWith('W/') ? tag.slice(2) : tag) === opaque;
  });
}

/**
 * The conditional stage: on a conditional route, the `ETag` of a `200`, and a `304` in place of a `200`
 * the client holds.
 */
export const conditionalStage: Stage = {
  name: 'conditional',
  forRoute: (route) => (route.conditional ? CONDITIONAL_PHASES : {}),
};

const CONDITIONAL_PHASES: Phases = {
  onSend(request, reply, payload) {
    if (reply.statusCode !== 200 || typeof payload !== 'string') return payload;
    // A handler that answers a representation it holds (a page from memory) sets its tag: not hashed again.
    let etag = reply.getHeader(ETAG_FIELD) as string | undefined;
    if (etag === undefined) reply.header(ETAG_FIELD, (etag = etagOf(payload)));
    const ifNoneMatch = request.headers[IF_NONE_MATCH_FIELD];
    if (typeof ifNoneMatch !== 'string' || !noneMatchHolds(ifNoneMatch, etag)) return payload;
    reply.code(304);
    reply.removeHeader('content-type');
    return '';
  },
};

/** A conditional route's `200`: its schema, with the `ETag` it carries. */
function withEtag<T extends object>(schema: T): T & { headers: { etag: typeof CONDITIONAL.etag } } {
  return { ...schema, headers: { etag: CONDITIONAL.etag } };
}

/**
 * The options of a conditional read: marked `conditional`, reading `If-None-Match`, answering `ok`
 * (with its `ETag`), `304`, and the `problems` it may answer; the conditional stage above answers it.
 */
export function conditionalRead<const S extends object, const O extends object, const P extends object>(
  schema: S,
  ok: O,
  problems: P,
) {
  return {
    config: { conditional: true },
    schema: {
      ...schema,
      headers: CONDITIONAL.headers,
      response: { 200: withEtag(ok), ...CONDITIONAL.notModified, ...problems },
    },
  };
}

/** What a conditional route declares: the `If-None-Match` it reads, the `ETag` of its `200`, its `304`. */
const CONDITIONAL = {
  headers: Type.Object({
    [IF_NONE_MATCH_FIELD]: Type.Optional(
      Type.String({
        maxLength: 1_000,
        description:
          'The `ETag` of the representation you hold (or several, comma-separated, or `*`): if it is still current ' +
          'the answer is `304` with no body, and it counts nothing.',
      }),
    ),
  }),
  etag: {
    type: 'string',
    maxLength: 100,
    description: 'A strong validator of the body: send it back in `If-None-Match` to get `304` while it is current.',
  },
  notModified: {
    304: {
      // No body: @fastify/swagger declares a response of type `null` without content (a `304` has none).
      type: 'null',
      description:
        'Not modified: the representation you hold (its `ETag` in `If-None-Match`) is current. No body; counts ' +
        'nothing toward your limits.',
      headers: { etag: { type: 'string', maxLength: 100, description: 'The current `ETag`, the one you sent.' } },
    },
  },
} as const;
