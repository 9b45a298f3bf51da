import Type from 'typebox';
import { PROBLEM_CONTENT_TYPE, PROBLEM_TYPES } from './problems.js';
import { BannedProblem, Problem, RateLimitedProblem, ref, ValidationProblem } from './schemas.js';

/** Where a created record is (RFC 9110). */
export const LOCATION_HEADER = 'Location';
export const CACHE_CONTROL_HEADER = 'Cache-Control';

/** An answer no cache may keep: a refusal (contract §3), a secret shown once. Declared where it is sent. */
export const NO_STORE = 'no-store';
export const NO_STORE_HEADER = {
  [CACHE_CONTROL_HEADER]: { type: 'string', const: NO_STORE, description: '`no-store`: no cache may keep this answer.' },
} as const;

/**
 * Problem responses for route schemas. They document the operation; Fastify never serialises a problem
 * through them (see `sendProblem`).
 */
const BY_STATUS: Record<number, { description: string; schema: object }> = {
  400: { description: 'Invalid input: every invalid input is listed in `errors`.', schema: ref(ValidationProblem) },
  401: { description: PROBLEM_TYPES.unauthorized.title, schema: ref(Problem) },
  403: { description: PROBLEM_TYPES['test-key-required'].title, schema: ref(Problem) },
  404: { description: 'Not found.', schema: ref(Problem) },
  409: { description: 'The request conflicts with the state of the record.', schema: ref(Problem) },
  410: { description: PROBLEM_TYPES.sunset.title, schema: ref(Problem) },
  413: { description: PROBLEM_TYPES['payload-too-large'].title, schema: ref(Problem) },
  415: { description: PROBLEM_TYPES['unsupported-media-type'].title, schema: ref(Problem) },
  422: { description: PROBLEM_TYPES['idempotency-key-reused'].title, schema: ref(Problem) },
  429: {
    description: 'Rate limited (`rate-limited`) or temporarily banned (`key-banned`). Wait `Retry-After` seconds.',
    schema: Type.Union([ref(RateLimitedProblem), ref(BannedProblem)]),
  },
  500: { description: PROBLEM_TYPES['internal-error'].title, schema: ref(Problem) },
  503: { description: PROBLEM_TYPES['service-unavailable'].title, schema: ref(Problem) },
};

/** What every API operation may answer, whatever it does. */
export const COMMON_PROBLEM_STATUSES = [401, 429, 500, 503] as const;

export function problemResponses(...statuses: number[]) {
  return Object.fromEntries(
    statuses.map((status) => {
      const entry = BY_STATUS[status];
      if (!entry) throw new Error(`no problem response is defined for ${status}`);
      return [status, { description: entry.description, content: { [PROBLEM_CONTENT_TYPE]: { schema: entry.schema } } }];
    }),
  );
}
