import Type, { type TSchema } from 'typebox';
import { MAX_LIMIT, PLAN_NAMES } from '../ratelimit/plans.js';
import { MAX_HEAD_BYTES } from './limits.js';
import { VERSION_PATTERN } from '../versions/versions.js';
import { PROBLEM_SLUGS, PROBLEM_TYPES, type ProblemSlug } from './problems.js';
import { ref, RetryAfterSeconds, StringEnum } from './schemas.js';

/**
 * The problem schemas (RFC 9457): `Problem`, every problem's members, and one schema per problem type
 * (./problems.ts), which fixes its `code` and `status` and adds its own members, so that generated
 * clients tell a `404` from a `409` by type. Routes declare them through ./responses.ts.
 */

export const Problem = Type.Object(
  {
    type: Type.String({ format: 'uri', maxLength: 2048, description: 'An absolute URL ending in `/problems/<slug>`; that page explains the problem.' }),
    code: Type.String({
      maxLength: 100,
      pattern: '^[a-z]+(-[a-z]+)*$',
      description: "The problem type's slug, the last segment of `type`: the same on every deployment, for code to tell problems apart.",
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
    name: Type.String({ maxLength: 1_000, description: 'The parameter, header or body member (a JSON pointer) at fault.' }),
    message: Type.String({ maxLength: 1_000 }),
  },
  { additionalProperties: false },
);

/** The members of the problem types that have more than the common ones. */
const OWN_MEMBERS: Partial<Record<ProblemSlug, Record<string, TSchema>>> = {
  'invalid-request': { errors: Type.Array(InputErrorSchema, { maxItems: 1_000 }) },
  'rate-limited': {
    window: StringEnum(['minute', 'day'], { description: 'The window that refused the request.' }),
    limit: Type.Integer({ format: 'int32', minimum: 1, maximum: MAX_LIMIT }),
    plan: StringEnum([...PLAN_NAMES, 'anonymous', 'documentation'], {
      description:
        "The key's plan; `anonymous` for a request without a valid key (counted per client address); `documentation` for the per-address throttle of the paths that count nothing (the docs, the document, the problem pages, `/usage`).",
    }),
    retryAfter: RetryAfterSeconds('Seconds, the same as the `Retry-After` header.'),
  },
  'unknown-version': {
    versions: Type.Array(Type.String({ pattern: VERSION_PATTERN, maxLength: 10 }), {
      maxItems: 100,
      description: 'Every version, oldest first.',
    }),
  },
  'key-banned': {
    retryAfter: RetryAfterSeconds('Seconds until the ban ends, the same as `Retry-After`.'),
    bannedUntil: Type.String({ format: 'date-time', maxLength: 30 }),
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
  return KNOWN_NAMES[slug] ?? `${slug.replace(/(^|-)([a-z])/g, (_, __, letter: string) => letter.toUpperCase())}Problem`;
}

function problemSchema(slug: ProblemSlug) {
  const { status, title } = PROBLEM_TYPES[slug];
  // As the common members' types say them (an `integer` status), so that the two merge.
  const code = Type.Unsafe<typeof slug>({ type: 'string', const: slug });
  const fixedStatus = Type.Unsafe<typeof status>({ type: 'integer', format: 'int32', minimum: status, maximum: status, const: status });
  const fixed = Type.Object({ code, status: fixedStatus, ...OWN_MEMBERS[slug] });
  return Type.Intersect([ref(Problem), fixed], { $id: schemaName(slug), description: `A \`${status}\` of type \`${slug}\`: ${title}.` });
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

/** One schema per problem type an operation may answer with, by slug. */
export const PROBLEM_SCHEMAS = Object.fromEntries(ROUTE_PROBLEM_SLUGS.map((slug) => [slug, problemSchema(slug)])) as Partial<
  Record<ProblemSlug, ReturnType<typeof problemSchema>>
>;

/** What the app registers: `Problem` and the problem types' schemas. */
export const PROBLEM_SCHEMA_LIST = [Problem, ...Object.values(PROBLEM_SCHEMAS)];
