import type { SwaggerOptions } from '@fastify/swagger';
import { TEST_KEYS_IN_WORDS } from '../faults/prefer.js';
import { API_KEY_HEADER } from '../keys/identify.js';
import { SCOPES } from '../oauth/scopes.js';
import { TOKEN_PATH } from '../oauth/token-route.js';
import { bansInWords } from '../ratelimit/ban-prose.js';
import type { BanRules } from '../ratelimit/decision.js';
import { PLAN_LIMITS } from '../ratelimit/plans.js';
import { webhooksSection } from '../webhooks/document.js';
import {
  type OpenApiDocument,
  withHeaderSpellings,
  withOptionalBodies,
  withoutUncountedMarks,
  withParameters,
  withPathExamples,
  withResponseHeaders,
  withStability,
} from './transforms.js';
import { NEWEST_VERSION } from '../versions/versions.js';
import { openapiTags, tagGroups } from '../http/tags.js';

export const SECURITY_SCHEME = 'ApiKey';
/** An access token of the key, from the client credentials grant (oauth/), with the scopes an operation needs. */
export const OAUTH_SCHEME = 'OAuth2';
/** The token endpoint's client credentials, by HTTP Basic: the key id and the key. */
export const CLIENT_SCHEME = 'ClientCredentials';

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
      " What counts nothing toward a plan (the document, `/usage`, `/versions`, `/scenarios`, a test key's " +
      'clock, reset, script and card) is throttled on its own: per key where a valid key is sent, per client address otherwise ' +
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
          [OAUTH_SCHEME]: {
            type: 'oauth2',
            description:
              'An access token of your key (`Authorization: Bearer …`), from the client credentials grant: your key ' +
              'id is the client id, your key the client secret. It expires: ask for another shortly before. Tokens ' +
              'are JWTs (RFC 9068), issued and checked as RFC8725 recommends: one algorithm (ES256), `typ`, issuer ' +
              'and audience checked.',
            flows: { clientCredentials: { tokenUrl: `${publicUrl}${TOKEN_PATH}`, scopes: SCOPES } },
          },
          [CLIENT_SCHEME]: {
            type: 'http',
            scheme: 'basic',
            description: 'Client credentials of the token endpoint: your key id as the user, your key as the password.',
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
      // Every operation the document shows needs a key or its token: said once, at the top, for tools that read only that.
      document.security = [{ [SECURITY_SCHEME]: [] }, { [OAUTH_SCHEME]: [] }];
      document.webhooks = webhooksSection();
      return withoutUncountedMarks(
        withStability(
          withOptionalBodies(withPathExamples(withParameters(withResponseHeaders(withHeaderSpellings(document))))),
        ),
      );
    },
  } as unknown as SwaggerOptions;
}
