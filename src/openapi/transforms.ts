import { PREFER_HEADER } from '../faults/prefer.js';
import { headerSpelling } from './header-names.js';
import {
  HEADERS,
  ON_COUNTED,
  ON_DEPRECATED,
  ON_EVERY_RESPONSE,
  ON_REFUSED,
  ON_RETRYABLE,
  PARAMETERS,
  SOMETIMES,
} from './headers.js';
import { VERSION_HEADER } from '../versions/versions.js';

/**
 * What the document needs beyond what @fastify/swagger makes of the routes, each a pass over its operations:
 * stability marks in words, optional bodies, path examples, the common parameters and response headers
 * (./headers.ts), and every header in its one spelling (./header-names.ts). ./document.ts runs them in order.
 */

/** What each stability mark means, said where tools that ignore `x-stability` show it. */
const STABILITY = {
  beta: {
    badge: 'Beta',
    meaning: 'complete, but may still change in a compatible way or, with notice, an incompatible one.',
  },
  experimental: { badge: 'Experimental', meaning: 'may change or go away at any time, without notice.' },
} as const;

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

export interface OpenApiDocument {
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
export function withStability(document: OpenApiDocument): OpenApiDocument {
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
 * (`config.counted: false`, carried to the document as `x-uncounted` by src/app.ts and taken
 * off it by `withoutUncountedMarks`, once the document has read it).
 */
const counts = (operation: Operation) => operation['x-uncounted'] !== true;

/** The mark `counts` reads is the document's own business: not shown. */
export function withoutUncountedMarks(document: OpenApiDocument): OpenApiDocument {
  for (const operation of operationsOf(document)) delete operation['x-uncounted'];
  return document;
}

/** A body a route lets the client leave out (http/schemas.ts `bodyOptional`): not required in the document. */
export function withOptionalBodies(document: OpenApiDocument): OpenApiDocument {
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
export function withPathExamples(document: OpenApiDocument): OpenApiDocument {
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
export function withParameters(document: OpenApiDocument): OpenApiDocument {
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
export function withHeaderSpellings(document: OpenApiDocument): OpenApiDocument {
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
export function withResponseHeaders(document: OpenApiDocument): OpenApiDocument {
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
