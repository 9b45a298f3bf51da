import Type from 'typebox';
import { problemRef, ROUTE_PROBLEM_SLUGS } from './problem-schemas.js';
import { PROBLEM_CONTENT_TYPE } from './problems.js';
import { PROBLEM_TYPES, type ProblemSlug } from './problem-types.js';

/** Where a created record is (RFC 9110). */
export const LOCATION_HEADER = 'Location';
export const CACHE_CONTROL_HEADER = 'Cache-Control';
/** How long to wait before trying again: a `429`'s, a `503`'s, a refused connection's. */
export const RETRY_AFTER_HEADER = 'Retry-After';

/**
 * An answer no cache may keep: a refusal (docs/rate-limits.md#429), a secret shown once. Declared where it is sent.
 */
/** The content type Fastify gives a body its serialiser wrote: what an answer from memory says too. */
export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

export const NO_STORE = 'no-store';
export const NO_STORE_HEADER = {
  [CACHE_CONTROL_HEADER]: {
    type: 'string',
    const: NO_STORE,
    description: '`no-store`: no cache may keep this answer.',
  },
} as const;

/**
 * Problem responses for route schemas. They document the operation; Fastify never serialises a problem
 * through them (see `sendProblem`).
 */
const BY_STATUS: Record<number, { description: string; schema: object }> = Object.fromEntries(
  Object.entries({
    400:
      'Invalid input (`invalid-request`: every invalid input is listed in `errors`), or an unknown ' +
      '`Petstore-Version` (`unknown-version`).',
    401: PROBLEM_TYPES.unauthorized.title,
    403: PROBLEM_TYPES['test-key-required'].title,
    404: 'Not found.',
    409: 'The request conflicts with the state of the record.',
    410: PROBLEM_TYPES.sunset.title,
    413: PROBLEM_TYPES['payload-too-large'].title,
    415: PROBLEM_TYPES['unsupported-media-type'].title,
    422: PROBLEM_TYPES['idempotency-key-reused'].title,
    429:
      'Rate limited (`rate-limited`), temporarily banned (`key-banned`), or, on an operation that counts nothing, ' +
      'throttled (`uncounted-throttled`). Wait `Retry-After` seconds.',
    500: PROBLEM_TYPES['internal-error'].title,
    503: PROBLEM_TYPES['service-unavailable'].title,
  }).map(([status, description]) => [status, { description, schema: schemaOf(Number(status)) }]),
);

/** The schema of a status's problems: its one type's, or any of its types'. */
function schemaOf(status: number): object {
  const refs = ROUTE_PROBLEM_SLUGS.filter((slug) => PROBLEM_TYPES[slug].status === status).map(problemRef);
  return refs.length === 1 ? refs[0]! : Type.Union(refs);
}

/** What every API operation may answer, whatever it does. */
export const COMMON_PROBLEM_STATUSES = [400, 401, 429, 500, 503] as const;

/** The `409` of an operation: only the conflicts it meets, each its own schema, named by their slugs. */
export function conflictResponse(...slugs: ProblemSlug[]) {
  const refs = slugs.map((slug) => {
    if (!ROUTE_PROBLEM_SLUGS.includes(slug) || PROBLEM_TYPES[slug].status !== 409)
      throw new Error(`${slug} is not a conflict an operation answers`);
    return problemRef(slug);
  });
  const description = `Conflict: ${slugs.map((slug) => `\`${slug}\` (${PROBLEM_TYPES[slug].title.toLowerCase()})`).join(', or ')}.`;
  return {
    409: {
      description,
      content: { [PROBLEM_CONTENT_TYPE]: { schema: refs.length === 1 ? refs[0]! : Type.Union(refs) } },
    },
  };
}

export function problemResponses(...statuses: number[]) {
  return Object.fromEntries(
    statuses.map((status) => {
      const entry = BY_STATUS[status];
      if (!entry) throw new Error(`no problem response is defined for ${status}`);
      return [
        status,
        { description: entry.description, content: { [PROBLEM_CONTENT_TYPE]: { schema: entry.schema } } },
      ];
    }),
  );
}
