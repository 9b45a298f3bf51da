import Type, { type Static, type TSchema } from 'typebox';

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

/**
 * The most seconds a `Retry-After` says, as the documents declare
 * it: a day, the longest wait of the day window (ratelimit/).
 */
export const MAX_RETRY_AFTER_SECONDS = 24 * 60 * 60;

/** Whole seconds to wait: at most a day (the day window's reset). */
export const RetryAfterSeconds = (description: string) =>
  Type.Integer({ format: 'int32', minimum: 1, maximum: MAX_RETRY_AFTER_SECONDS, description });

/** A positive int64 in decimal: the form of every record id. */
export const Int64Id = (description: string) => Type.Integer({ format: 'int64', minimum: 1, description });

/** The page a collection's query asks for: how many items, after which cursor. */
/** The query of a route that takes no parameters: any sent is a `400` (http/validation.ts `onlyDeclared`). */
export const NoQuery = Type.Object({});

export const PageQuery = Type.Object({
  limit: Type.Optional(
    Type.Integer({
      format: 'int32',
      minimum: 1,
      maximum: 100,
      default: 20,
      description: 'How many items to return, 1 to 100.',
    }),
  ),
  cursor: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 200,
      pattern: '^[A-Za-z0-9_-]+$',
      description: 'The `nextCursor` of the previous page.',
    }),
  ),
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

/**
 * A route's `preValidation` where its body may be left out: no body is the empty object, which its schema
 * (none of whose members is required) accepts. Its schema carries `'x-body-optional': true`, so that the
 * document says the body is optional (openapi/transforms.ts).
 */
export function bodyOptional(request: { body: unknown }, _reply: unknown, done: () => void): void {
  request.body ??= {};
  done();
}
