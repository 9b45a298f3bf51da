import Type, { type Static, type TSchema } from 'typebox';
import { MAX_HEAD_BYTES } from './limits.js';
import { PROBLEM_SLUGS, PROBLEM_TYPES, type ProblemSlug } from './problem-types.js';
import { ref, RetryAfterSeconds, StringEnum } from './schemas.js';

/**
 * The problem schemas (RFC 9457): `Problem`, every problem's members, and one schema per problem type
 * (./problems.ts), which fixes its `code` and `status` and adds its own members, so that generated
 * clients tell a `404` from a `409` by type. Routes declare them through ./responses.ts.
 */

export const Problem = Type.Object(
  {
    type: Type.String({
      format: 'uri',
      maxLength: 2048,
      description: 'An absolute URL ending in `/problems/<slug>`; that page explains the problem.',
    }),
    code: Type.String({
      maxLength: 100,
      pattern: '^[a-z]+(-[a-z]+)*$',
      description:
        "The problem type's slug, the last segment of `type`: the same on every deployment, for code to tell " +
        'problems apart.',
    }),
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
    name: Type.String({
      maxLength: 1_000,
      description: 'The parameter, header or body member (a JSON pointer) at fault.',
    }),
    message: Type.String({ maxLength: 1_000 }),
  },
  { additionalProperties: false },
);

/** The members of problem types beyond the common ones, by type. */
export type ProblemMembers = Partial<Record<ProblemSlug, Record<string, TSchema>>>;

/**
 * The members of the edge's own problem types that have more than
 * the common ones (the components give theirs: `problemSchemaList`).
 */
const OWN_MEMBERS: ProblemMembers = {
  'invalid-request': { errors: Type.Array(InputErrorSchema, { maxItems: 1_000 }) },
  'key-banned': {
    retryAfter: RetryAfterSeconds('Seconds until the ban ends, the same as `Retry-After`.'),
    bannedUntil: Type.String({ format: 'date-time', maxLength: 30 }),
  },
  'insufficient-scope': {
    scope: Type.String({ maxLength: 100, description: 'The scope the operation needs (oauth/scopes.ts).' }),
  },
};

/** The names the document has given these since before every type had a schema: clients know them. */
const KNOWN_NAMES: Partial<Record<ProblemSlug, string>> = {
  'invalid-request': 'ValidationProblem',
  'rate-limited': 'RateLimitedProblem',
  'key-banned': 'BannedProblem',
};

/** `not-found` → `NotFoundProblem`. */
function schemaName(slug: ProblemSlug): string {
  return (
    KNOWN_NAMES[slug] ?? `${slug.replace(/(^|-)([a-z])/g, (_, __, letter: string) => letter.toUpperCase())}Problem`
  );
}

function problemSchema(slug: ProblemSlug, members: ProblemMembers) {
  const { status, title } = PROBLEM_TYPES[slug];
  // As the common members' types say them (an `integer` status), so that the two merge.
  const code = Type.Unsafe<typeof slug>({ type: 'string', const: slug });
  const fixedStatus = Type.Unsafe<typeof status>({
    type: 'integer',
    format: 'int32',
    minimum: status,
    maximum: status,
    const: status,
  });
  const fixed = Type.Object({ code, status: fixedStatus, ...members[slug] });
  return Type.Intersect([ref(Problem), fixed], {
    $id: schemaName(slug),
    description: `A \`${status}\` of type \`${slug}\`: ${title}.`,
  });
}

/**
 * The problems answered before any route is chosen (a connection refused, a request Node could not
 * read, a method the path does not take): no operation declares them, so they have no schema of their
 * own (their pages say what they hold).
 */
const BEFORE_ANY_ROUTE = new Set<ProblemSlug>([
  'too-many-connections',
  'pipelining-flood',
  'request-timeout',
  'headers-too-large',
  'expectation-failed',
  'method-not-allowed',
]);

/** The problem types an operation may answer with. */
export const ROUTE_PROBLEM_SLUGS = PROBLEM_SLUGS.filter((slug) => !BEFORE_ANY_ROUTE.has(slug));

/**
 * A route's reference to a problem type's schema, by its name (the
 * schema is registered with the others: `problemSchemaList`).
 */
export function problemRef(slug: ProblemSlug) {
  return Type.Unsafe<Static<typeof Problem>>({ $ref: `${schemaName(slug)}#` });
}

/**
 * What the app registers: `Problem`, and one schema per problem type an operation may answer with,
 * with the members the components give their types (`members`: the plans of `rate-limited`, the
 * versions of `unknown-version`) beside the edge's own.
 */
export function problemSchemaList(members: ProblemMembers): TSchema[] {
  const all = { ...OWN_MEMBERS, ...members };
  return [Problem, ...ROUTE_PROBLEM_SLUGS.map((slug) => problemSchema(slug, all))];
}
