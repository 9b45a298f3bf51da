import { PROBLEM_CONTENT_TYPE } from '../http/problems.js';
import { PROBLEM_TYPES } from '../http/problem-types.js';
import { DEPRECATION_HEADER, LINK_HEADER, SUNSET_HEADER } from '../deprecation/notices.js';
import type { JsonSchema } from './change.js';
import { changesAfter, NEWEST_VERSION, OLDEST_VERSION, VERSIONS } from './versions.js';

interface Response {
  description?: string;
  headers?: Record<string, unknown>;
  content?: Record<string, unknown>;
}

interface Operation {
  deprecated?: boolean;
  responses?: Record<string, Response>;
  security?: unknown[];
}

interface Document {
  info: { version: string; description?: string };
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, JsonSchema> };
}

/**
 * The document of an older version, from the newest's (the one @fastify/swagger generates from the
 * route schemas): each later version's change undone on the named schemas, newest first, as its
 * answers are (./shape.ts); and, for the deprecated oldest version, every operation deprecated, every
 * response carrying the deprecation headers, and every API operation's `410` once the version's sunset
 * is past.
 */
export function documentFor(version: string, newest: object): object {
  if (version === NEWEST_VERSION) return newest;
  const document = structuredClone(newest) as Document;
  document.info.version = version;
  const { schemas } = document.components;
  for (const change of changesAfter(version)) {
    for (const [name, undo] of Object.entries(change.schemas)) schemas[name] = undo(schemas[name]!);
  }
  if (version === OLDEST_VERSION) deprecateAll(document);
  return document;
}

function deprecateAll(document: Document): void {
  document.info.description =
    `**This version (${OLDEST_VERSION}) is deprecated**: every answer carries \`Deprecation\`, \`Sunset\` and ` +
    `\`Link\`, and from its sunset on every request for it is a \`410\` (\`version-sunset\`). The newest is ` +
    `${VERSIONS.at(-1)}: see \`GET /versions\` for what changed.\n\n${document.info.description ?? ''}`;
  const deprecation = Object.fromEntries(
    [DEPRECATION_HEADER, SUNSET_HEADER, LINK_HEADER].map((name) => [name, { $ref: `#/components/headers/${name}` }]),
  );
  for (const operations of Object.values(document.paths)) {
    for (const operation of Object.values(operations)) {
      operation.deprecated = true;
      const responses = operation.responses ?? {};
      for (const response of Object.values(responses)) response.headers = { ...response.headers, ...deprecation };
      // The API's operations (those that take a key) refuse a sunset
      // version; the key's own 401 has every header a refusal carries.
      const refusal = responses['401'];
      if (!refusal || operation.security?.length === 0) continue;
      const sunset = responses['410'];
      const schema = { $ref: '#/components/schemas/VersionSunsetProblem' };
      const existing = (sunset?.content?.[PROBLEM_CONTENT_TYPE] as { schema?: { anyOf?: unknown[] } } | undefined)
        ?.schema;
      responses['410'] = {
        description: sunset
          ? `${sunset.description} Or ${PROBLEM_TYPES['version-sunset'].title.toLowerCase()}.`
          : PROBLEM_TYPES['version-sunset'].title,
        headers: refusal.headers,
        content: {
          [PROBLEM_CONTENT_TYPE]: {
            schema: existing ? (existing.anyOf ? existing : { anyOf: [existing, schema] }) : schema,
          },
        },
      };
    }
  }
}
