import Type, { type Static, type TSchema } from 'typebox';
import { MAX_RETRY_AFTER_SECONDS } from '../ratelimit/headers.js';
import { MAX_LIMIT, PLAN_NAMES } from '../ratelimit/plans.js';
import { MAX_HEAD_BYTES } from './limits.js';

/**
 * Schemas shared by every operation. A schema with an `$id` is registered once on the app and
 * becomes a named component of the OpenAPI document; routes point at it with `ref()`.
 */

/** A reference to a registered schema that keeps the referenced schema's static type. */
export function ref<T extends TSchema & { $id?: string }>(schema: T) {
  if (!schema.$id) throw new Error('only a schema with an $id can be referenced');
  return Type.Unsafe<Static<T>>({ $ref: `${schema.$id}#` });
}

/** A string enum that reads well in the OpenAPI document (`type: string` with `enum`). */
export function StringEnum<const T extends readonly string[]>(values: T, options: { description?: string } = {}) {
  return Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options });
}

/** Whole seconds to wait: at most a day (the day window's reset). */
export const RetryAfterSeconds = (description: string) => Type.Integer({ format: 'int32', minimum: 1, maximum: MAX_RETRY_AFTER_SECONDS, description });

/** A positive int64 in decimal: the form of every record id. */
export const Int64Id = (description: string) => Type.Integer({ format: 'int64', minimum: 1, description });

export const Problem = Type.Object(
  {
    type: Type.String({ format: 'uri', maxLength: 2048, description: 'An absolute URL ending in `/problems/<slug>`; that page explains the problem.' }),
    title: Type.String({ maxLength: 200 }),
    status: Type.Integer({ format: 'int32', minimum: 400, maximum: 599 }),
    detail: Type.String({ maxLength: 20_000 }),
    instance: Type.String({
      maxLength: MAX_HEAD_BYTES,
      description: 'The path of the request that failed; empty when not even its request line could be read.',
    }),
  },
  { $id: 'Problem', description: 'An RFC 9457 problem.', additionalProperties: true },
);

export const InputErrorSchema = Type.Object(
  {
    in: StringEnum(['path', 'query', 'header', 'body']),
    name: Type.String({ maxLength: 1_000, description: 'The parameter, header or body member (a JSON pointer) at fault.' }),
    message: Type.String({ maxLength: 1_000 }),
  },
  { additionalProperties: false },
);

export const ValidationProblem = Type.Intersect([ref(Problem), Type.Object({ errors: Type.Array(InputErrorSchema, { maxItems: 1_000 }) })], {
  $id: 'ValidationProblem',
  description: 'A `400` problem listing every invalid input.',
});

export const RateLimitedProblem = Type.Intersect(
  [
    ref(Problem),
    Type.Object({
      window: StringEnum(['minute', 'day'], { description: 'The window that refused the request.' }),
      limit: Type.Integer({ format: 'int32', minimum: 1, maximum: MAX_LIMIT }),
      plan: StringEnum([...PLAN_NAMES, 'anonymous', 'documentation'], {
        description:
          "The key's plan; `anonymous` for a request without a valid key (counted per client address); `documentation` for the per-address throttle of the paths that count nothing (the docs, the document, the problem pages, `/usage`).",
      }),
      retryAfter: RetryAfterSeconds('Seconds, the same as the `Retry-After` header.'),
    }),
  ],
  { $id: 'RateLimitedProblem', description: 'A `429` of type `rate-limited`.' },
);

export const BannedProblem = Type.Intersect(
  [
    ref(Problem),
    Type.Object({
      retryAfter: RetryAfterSeconds('Seconds until the ban ends, the same as `Retry-After`.'),
      bannedUntil: Type.String({ format: 'date-time', maxLength: 30 }),
    }),
  ],
  { $id: 'BannedProblem', description: 'A `429` of type `key-banned`.' },
);

export const SHARED_SCHEMAS = [Problem, ValidationProblem, RateLimitedProblem, BannedProblem];

/** The page a collection's query asks for: how many items, after which cursor. */
export const PageQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ format: 'int32', minimum: 1, maximum: 100, default: 20, description: 'How many items to return, 1 to 100.' })),
  cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 200, pattern: '^[A-Za-z0-9_-]+$', description: 'The `nextCursor` of the previous page.' })),
});

/** The query of a collection: a `status` filter and the page. */
export function ListQuery<const T extends readonly string[]>(statuses: T, what: string) {
  return Type.Object({
    status: Type.Optional(StringEnum(statuses, { description: `Only ${what} with this status.` })),
    ...PageQuery.properties,
  });
}

/** A page of a collection: a cursor never skips or repeats an item. */
export function Page<T extends TSchema>(item: T, description: string) {
  return Type.Object(
    {
      data: Type.Array(item, { maxItems: 100 }),
      nextCursor: Type.Union([Type.String({ maxLength: 200, pattern: '^[A-Za-z0-9_-]+$' }), Type.Null()], {
        description: 'Pass as `cursor` for the next page; `null` on the last page.',
      }),
    },
    { description },
  );
}
