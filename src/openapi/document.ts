import type { SwaggerOptions } from '@fastify/swagger';
import {
  PREFER_DESCRIPTION,
  PREFER_HEADER,
  PREFERENCE_APPLIED_DESCRIPTION,
  PREFERENCE_APPLIED_HEADER,
  TEST_KEYS_IN_WORDS,
} from '../faults/prefer.js';
import { ALLOW_ORIGIN_HEADER } from '../http/cors.js';
import { MAX_HEAD_BYTES } from '../http/limits.js';
import { REQUEST_ID_HEADER } from '../http/request-id.js';
import { CACHE_CONTROL_HEADER, NO_STORE, NO_STORE_HEADER, RETRY_AFTER_HEADER } from '../http/responses.js';
import { MAX_RETRY_AFTER_SECONDS } from '../http/schemas.js';
import { API_KEY_HEADER } from '../keys/identify.js';
import { IDEMPOTENT_REPLAYED_HEADER } from '../idempotency/header.js';
import { DEPRECATION_HEADER, LINK_HEADER, SUNSET_HEADER } from '../deprecation/notices.js';
import { bansInWords } from '../ratelimit/ban-prose.js';
import type { BanRules } from '../ratelimit/decision.js';
import {
  LIMIT_HEADER,
  POLICY_HEADER,
  RATE_LIMIT_HEADER,
  REMAINING_HEADER,
  RESET_HEADER,
} from '../ratelimit/headers.js';
import { MAX_LIMIT, PLAN_LIMITS } from '../ratelimit/plans.js';
import { DAY_MS, MINUTE_MS } from '../ratelimit/state.js';
import { webhooksSection } from '../webhooks/document.js';
import { headerSpelling } from './header-names.js';
import { NEWEST_VERSION, OLDEST_VERSION, VERSION_HEADER, VERSIONS } from '../versions/versions.js';
import { openapiTags, tagGroups } from '../http/tags.js';

export const SECURITY_SCHEME = 'ApiKey';

/** The windows' lengths in seconds, as the headers give them (`w`, `t`). */
const MINUTE_S = MINUTE_MS / 1000;
const DAY_S = DAY_MS / 1000;

/** Headers declared once under `components.headers` and referenced from every response. */
const HEADERS: Record<string, { description: string; schema: object; required?: boolean }> = {
  [LIMIT_HEADER]: {
    description: 'The limit of the binding window (the one with the least left; on a tie, the day).',
    schema: { type: 'integer', format: 'int32', minimum: 1, maximum: MAX_LIMIT },
  },
  [REMAINING_HEADER]: {
    description: 'Requests left in the binding window; 0 while banned.',
    schema: { type: 'integer', format: 'int32', minimum: 0, maximum: MAX_LIMIT },
  },
  [RESET_HEADER]: {
    description: 'Unix time (seconds, rounded up) at which the binding window is full again, or the ban ends.',
    schema: { type: 'integer', format: 'int64', minimum: 0 },
  },
  [POLICY_HEADER]: {
    description: `Both windows of your plan, IETF draft form: \`"minute";q=60;w=${MINUTE_S}, "day";q=1000;w=${DAY_S}\`.`,
    schema: { type: 'string', maxLength: 100, pattern: `^"minute";q=\\d+;w=${MINUTE_S}, "day";q=\\d+;w=${DAY_S}$` },
  },
  [RATE_LIMIT_HEADER]: {
    description:
      `What is left in each window (\`r\`) and \`t\` (draft-ietf-httpapi-ratelimit-headers-11): while quota ` +
      `remains, the seconds the window in effect still runs (the minute: until its oldest counted request leaves, ` +
      `${MINUTE_S} when none is counted; the day: until the next UTC midnight); with none left, the seconds until ` +
      `one more request is admitted. On a \`429\` the window that refused comes first: \`"minute";r=59;t=60, ` +
      `"day";r=999;t=43200\`.`,
    schema: { type: 'string', maxLength: 100, pattern: '^"(minute|day)";r=\\d+;t=\\d+, "(minute|day)";r=\\d+;t=\\d+$' },
  },
  [REQUEST_ID_HEADER]: {
    description: 'Your `X-Request-Id` if you sent a sane one, else a new id. Quote it when you report a problem.',
    schema: { type: 'string', maxLength: 128, pattern: '^[A-Za-z0-9._:-]+$' },
  },
  [RETRY_AFTER_HEADER]: {
    description: 'Whole seconds to wait before retrying.',
    schema: { type: 'integer', format: 'int32', minimum: 1, maximum: MAX_RETRY_AFTER_SECONDS },
  },
  [ALLOW_ORIGIN_HEADER]: {
    description: 'Any origin may call the API from a browser (keys travel in a header, not in cookies).',
    schema: { type: 'string', const: '*' },
  },
  [DEPRECATION_HEADER]: {
    description: 'RFC 9745: `@<unix seconds>` of the deprecation.',
    schema: { type: 'string', maxLength: 21, pattern: '^@-?\\d+$' },
  },
  [SUNSET_HEADER]: {
    description: 'RFC 8594: the HTTP date from which the operation answers `410`.',
    schema: {
      type: 'string',
      maxLength: 29,
      pattern: '^[A-Z][a-z]{2}, \\d{2} [A-Z][a-z]{2} \\d{4} \\d{2}:\\d{2}:\\d{2} GMT$',
    },
  },
  [LINK_HEADER]: {
    description: 'Links with `rel="deprecation"` and `rel="sunset"` to the page that explains them.',
    schema: { type: 'string', maxLength: 4096 },
  },
  [PREFERENCE_APPLIED_HEADER]: {
    description: PREFERENCE_APPLIED_DESCRIPTION,
    schema: { type: 'string', maxLength: 100, example: 'fault=503' },
  },
  [CACHE_CONTROL_HEADER]: {
    description: NO_STORE_HEADER[CACHE_CONTROL_HEADER].description,
    schema: { type: 'string', const: NO_STORE },
  },
  [VERSION_HEADER]: {
    description:
      'The version of the API that shaped this answer: the one the request named, else its key’s pinned version, ' +
      'else the newest. See `GET /versions`.',
    schema: { type: 'string', enum: [...VERSIONS] },
  },
};

/**
 * Parameters declared once under `components.parameters`: `Prefer`, on every operation that counts (test keys' faults).
 */
const PARAMETERS = {
  [VERSION_HEADER]: {
    in: 'header',
    name: VERSION_HEADER,
    required: false,
    description:
      `The version of the API to answer in (\`GET /versions\`); without it, the version your key is pinned to ` +
      `(keys made before versions: ${OLDEST_VERSION}; new keys: the newest). An unknown one is a \`400\` ` +
      `(\`unknown-version\`).`,
    schema: { type: 'string', enum: [...VERSIONS] },
  },
  [PREFER_HEADER]: {
    in: 'header',
    name: PREFER_HEADER,
    required: false,
    description: PREFER_DESCRIPTION,
    schema: { type: 'string', maxLength: MAX_HEAD_BYTES },
    example: 'fault=503',
  },
};

const ON_EVERY_RESPONSE = [
  LIMIT_HEADER,
  REMAINING_HEADER,
  RESET_HEADER,
  POLICY_HEADER,
  RATE_LIMIT_HEADER,
  REQUEST_ID_HEADER,
  ALLOW_ORIGIN_HEADER,
  VERSION_HEADER,
];
const ON_RETRYABLE = [RETRY_AFTER_HEADER];
/** A `429` is never to be cached (docs/rate-limits.md#429). */
const ON_REFUSED = [CACHE_CONTROL_HEADER];
const ON_DEPRECATED = [DEPRECATION_HEADER, SUNSET_HEADER, LINK_HEADER];
/** Sent only when a test key's preference was applied, which may happen on any answer of an operation that counts. */
const ON_COUNTED = [PREFERENCE_APPLIED_HEADER];
// Always there where they are declared, so that a validating proxy notices one missing.
for (const name of [...ON_EVERY_RESPONSE, ...ON_DEPRECATED, ...ON_REFUSED])
  HEADERS[name] = { ...HEADERS[name]!, required: true };

/** Headers a route declares that are sent only in the case their description gives. */
const SOMETIMES = new Set([IDEMPOTENT_REPLAYED_HEADER.toLowerCase(), PREFERENCE_APPLIED_HEADER.toLowerCase()]);

/** What each stability mark means, said where tools that ignore `x-stability` show it. */
const STABILITY = {
  beta: {
    badge: 'Beta',
    meaning: 'complete, but may still change in a compatible way or, with notice, an incompatible one.',
  },
  experimental: { badge: 'Experimental', meaning: 'may change or go away at any time, without notice.' },
} as const;

/** The plans as a Markdown table: in the document's description and, checked by a test, in the README. */
export function plansTable(): string {
  const rows = Object.entries(PLAN_LIMITS).map(
    ([plan, l]) => `| ${plan} | ${l.perMinute.toLocaleString('en')} | ${l.perDay.toLocaleString('en')} |`,
  );
  return [
    '| plan | per minute | per day |',
    '|---|---|---|',
    ...rows,
    '| enterprise | set per key | set per key |',
  ].join('\n');
}

function description(rules: BanRules): string {
  return [
    'A demonstration pet store that behaves like a commercial API: API keys tied to plans, exact rate limits, ' +
      'temporary bans, a deprecated operation with a sunset date, and operations marked **beta** (complete, but may ' +
      'still change) or **experimental** (may change or go away at any time).',
    '',
    `**Authentication.** Send your key in the \`${API_KEY_HEADER}\` header on every operation.`,
    '',
    '**Rate limits.** Counted per key (without a valid key: per client address, with the free numbers). The minute ' +
      'window slides: at most N requests in any 60 seconds. The day window is the UTC calendar day. Every response ' +
      'carries the rate-limit headers; a refused request gets `429` with `Retry-After`. Back off exponentially. ' +
      bansInWords(rules) +
      " What counts nothing toward a plan (the document, `/usage`, `/versions`, a test key's clock, reset and " +
      'card) is throttled on its own: per key where a valid key is sent, per client address otherwise ' +
      '(`uncounted-throttled`, never a ban).',
    '',
    plansTable(),
    '',
    '**Errors** are `application/problem+json` (RFC 9457); each `type` URL explains itself, and `code` holds its ' +
      'slug (`not-found`), the same on every deployment: each problem type is a schema of its own.',
    '',
    TEST_KEYS_IN_WORDS,
  ].join('\n');
}

export function swaggerOptions(publicUrl: string, rules: BanRules): SwaggerOptions {
  return {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Petstore',
        // The version of the API this document describes (versions/): each version has its own.
        version: NEWEST_VERSION,
        description: description(rules),
        contact: { name: 'Petstore maintainers', url: `${publicUrl}/docs` },
        license: { name: 'MIT', identifier: 'MIT' },
      },
      // A public API: `x-internal: false` says so to inventory tooling.
      servers: [
        {
          url: publicUrl,
          description: 'The Petstore demo API this page belongs to: local by default, production when deployed',
          'x-internal': false,
        },
      ],
      tags: openapiTags(),
      'x-tagGroups': tagGroups(),
      components: {
        securitySchemes: {
          [SECURITY_SCHEME]: {
            type: 'apiKey',
            in: 'header',
            name: API_KEY_HEADER,
            description: 'Your API key, `pet_…`.',
          },
        },
      },
    },
    refResolver: {
      buildLocalReference: (json: { $id?: unknown }, _baseUri: unknown, _fragment: unknown, i: number) =>
        String(json.$id ?? `def-${i}`),
    },
    transformObject: (documentObject: unknown) => {
      const document = (documentObject as { openapiObject: OpenApiDocument }).openapiObject;
      // Every operation the document shows needs a key: said once, at the top, for tools that read only that.
      document.security = [{ [SECURITY_SCHEME]: [] }];
      document.webhooks = webhooksSection();
      return withoutUncountedMarks(
        withStability(
          withOptionalBodies(withPathExamples(withParameters(withResponseHeaders(withHeaderSpellings(document))))),
        ),
      );
    },
  } as unknown as SwaggerOptions;
}

interface Operation {
  deprecated?: boolean;
  'x-body-optional'?: boolean;
  'x-uncounted'?: boolean;
  requestBody?: { required?: boolean };
  description?: string;
  'x-stability'?: keyof typeof STABILITY;
  'x-badges'?: Array<{ name: string; label: string; position: 'before' | 'after' }>;
  parameters?: Array<{ in: string; name: string; example?: unknown; schema?: { type?: string; example?: unknown } }>;
  responses?: Record<string, { headers?: Record<string, unknown> }>;
}

interface OpenApiDocument {
  components?: Record<string, unknown>;
  webhooks?: Record<string, unknown>;
  security?: Array<Record<string, string[]>>;
  paths?: Record<string, Record<string, Operation>>;
}

function operationsOf(document: OpenApiDocument): Operation[] {
  return operationsByPath(document).map(([, operation]) => operation);
}

/**
 * A stability mark also in words and as a badge (Scalar, Redocly), for SDKs and renderers that ignore `x-stability`.
 */
function withStability(document: OpenApiDocument): OpenApiDocument {
  for (const operation of operationsOf(document)) {
    const mark = operation['x-stability'];
    if (!mark) continue;
    const { badge, meaning } = STABILITY[mark];
    operation.description = `**${badge}**: ${meaning}${operation.description ? `\n\n${operation.description}` : ''}`;
    // `name` for Scalar and Redocly, `label` for RapiDoc (which renders nothing without it).
    operation['x-badges'] = [{ name: badge, label: badge, position: 'before' }];
  }
  return document;
}

/**
 * Whether an operation counts toward the plan: all do but those whose route says it counts nothing
 * (`config.counted: false`, carried to the document as `x-uncounted` by src/api-operations.ts and taken
 * off it by `withoutUncountedMarks`, once the document has read it).
 */
const counts = (operation: Operation) => operation['x-uncounted'] !== true;

/** The mark `counts` reads is the document's own business: not shown. */
function withoutUncountedMarks(document: OpenApiDocument): OpenApiDocument {
  for (const operation of operationsOf(document)) delete operation['x-uncounted'];
  return document;
}

/** A body a route lets the client leave out (http/schemas.ts `bodyOptional`): not required in the document. */
function withOptionalBodies(document: OpenApiDocument): OpenApiDocument {
  for (const operation of operationsOf(document)) {
    if (!operation['x-body-optional']) continue;
    delete operation['x-body-optional'];
    if (operation.requestBody) operation.requestBody.required = false;
  }
  return document;
}

/**
 * Path parameters are ids: an example that exists (the seeded catalogue starts at 1) for "Try it out"
 * and mock servers, or, for an id of another form (an event's), the example its schema gives.
 */
function withPathExamples(document: OpenApiDocument): OpenApiDocument {
  for (const operation of operationsOf(document)) {
    for (const parameter of operation.parameters ?? []) {
      if (parameter.in !== 'path' || parameter.example !== undefined) continue;
      parameter.example = parameter.schema?.type === 'integer' ? 1 : parameter.schema?.example;
    }
  }
  return document;
}

/**
 * Every operation takes `Petstore-Version`; every operation that counts takes `Prefer` (test keys' faults, faults/).
 */
function withParameters(document: OpenApiDocument): OpenApiDocument {
  document.components = { ...document.components, parameters: PARAMETERS };
  const refTo = (name: string) => ({ $ref: `#/components/parameters/${name}` }) as never;
  for (const operation of operationsOf(document)) {
    operation.parameters = [
      ...(operation.parameters ?? []),
      refTo(VERSION_HEADER),
      ...(counts(operation) ? [refTo(PREFER_HEADER)] : []),
    ];
  }
  return document;
}

/**
 * Every header the routes name, in the one spelling of ./header-names.ts: Fastify's schemas name
 * request headers in lower case, as Node hands them over. A header it does not know keeps its name
 * (and fails test/openapi/document.test.ts).
 */
function withHeaderSpellings(document: OpenApiDocument): OpenApiDocument {
  const spelt = (name: string) => headerSpelling(name) ?? name;
  const operations = [
    ...operationsOf(document),
    ...Object.values(document.webhooks ?? {}).flatMap((entry) => Object.values(entry as Record<string, Operation>)),
  ];
  for (const operation of operations) {
    for (const parameter of operation.parameters ?? [])
      if (parameter.in === 'header') parameter.name = spelt(parameter.name);
    for (const response of Object.values(operation.responses ?? {})) {
      if (response.headers)
        response.headers = Object.fromEntries(
          Object.entries(response.headers).map(([name, header]) => [spelt(name), header]),
        );
    }
  }
  return document;
}

function operationsByPath(document: OpenApiDocument): Array<[string, Operation]> {
  return Object.entries(document.paths ?? {}).flatMap(([path, operations]) =>
    Object.values(operations).map((operation): [string, Operation] => [path, operation]),
  );
}

/**
 * Declares the rate-limit headers on every response, `Retry-After` where it is sent, the deprecation
 * headers, and `Preference-Applied` on the answers of operations that count.
 */
function withResponseHeaders(document: OpenApiDocument): OpenApiDocument {
  const refTo = (name: string) => ({ $ref: `#/components/headers/${name}` });
  document.components = { ...document.components, headers: HEADERS };
  for (const operation of operationsOf(document)) {
    for (const [status, response] of Object.entries(operation.responses ?? {})) {
      const names = [
        ...ON_EVERY_RESPONSE,
        ...(status === '429' || status === '503' ? ON_RETRYABLE : []),
        ...(status === '429' ? ON_REFUSED : []),
        ...(operation.deprecated ? ON_DEPRECATED : []),
        ...(counts(operation) ? ON_COUNTED : []),
      ];
      // What a route declares itself is always sent, but for the few that say when they are.
      for (const [name, header] of Object.entries(response.headers ?? {})) {
        (header as { required?: boolean }).required = !SOMETIMES.has(name.toLowerCase());
      }
      response.headers = { ...response.headers, ...Object.fromEntries(names.map((n) => [n, refTo(n)])) };
    }
  }
  return document;
}
