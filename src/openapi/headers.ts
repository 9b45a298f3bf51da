import {
  PREFER_DESCRIPTION,
  PREFER_HEADER,
  PREFERENCE_APPLIED_DESCRIPTION,
  PREFERENCE_APPLIED_HEADER,
} from '../faults/prefer.js';
import { ALLOW_ORIGIN_HEADER } from '../http/cors.js';
import { MAX_HEAD_BYTES } from '../http/limits.js';
import { REQUEST_ID_HEADER } from '../http/request-id.js';
import { CACHE_CONTROL_HEADER, NO_STORE, NO_STORE_HEADER, RETRY_AFTER_HEADER } from '../http/responses.js';
import { MAX_RETRY_AFTER_SECONDS } from '../http/schemas.js';
import { IDEMPOTENT_REPLAYED_HEADER } from '../idempotency/header.js';
import { DEPRECATION_HEADER, LINK_HEADER, SUNSET_HEADER } from '../deprecation/notices.js';
import {
  LIMIT_HEADER,
  POLICY_HEADER,
  RATE_LIMIT_HEADER,
  REMAINING_HEADER,
  RESET_HEADER,
} from '../ratelimit/headers.js';
import { MAX_LIMIT } from '../ratelimit/plans.js';
import { DAY_MS, MINUTE_MS } from '../ratelimit/state.js';
import { OLDEST_VERSION, VERSION_HEADER, VERSIONS } from '../versions/versions.js';

/**
 * The headers and parameters the document declares once, under `components`, and which answers carry which
 * (./transforms.ts puts them on the operations): each header's constant is its component's own.
 */

/** The windows' lengths in seconds, as the headers give them (`w`, `t`). */
const MINUTE_S = MINUTE_MS / 1000;
const DAY_S = DAY_MS / 1000;

/** Headers declared once under `components.headers` and referenced from every response. */
export const HEADERS: Record<string, { description: string; schema: object; required?: boolean }> = {
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
export const PARAMETERS = {
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
    // No `example`: Swagger UI fills a parameter's example into Try it out, and a test key would meet a 503 it never
    // asked for. The description gives one.
  },
};

export const ON_EVERY_RESPONSE = [
  LIMIT_HEADER,
  REMAINING_HEADER,
  RESET_HEADER,
  POLICY_HEADER,
  RATE_LIMIT_HEADER,
  REQUEST_ID_HEADER,
  ALLOW_ORIGIN_HEADER,
  VERSION_HEADER,
];
export const ON_RETRYABLE = [RETRY_AFTER_HEADER];
/** A `429` is never to be cached (docs/rate-limits.md#429). */
export const ON_REFUSED = [CACHE_CONTROL_HEADER];
export const ON_DEPRECATED = [DEPRECATION_HEADER, SUNSET_HEADER, LINK_HEADER];
/** Sent only when a test key's preference was applied, which may happen on any answer of an operation that counts. */
export const ON_COUNTED = [PREFERENCE_APPLIED_HEADER];
// Always there where they are declared, so that a validating proxy notices one missing.
for (const name of [...ON_EVERY_RESPONSE, ...ON_DEPRECATED, ...ON_REFUSED])
  HEADERS[name] = { ...HEADERS[name]!, required: true };

/** Headers a route declares that are sent only in the case their description gives. */
export const SOMETIMES = new Set([IDEMPOTENT_REPLAYED_HEADER.toLowerCase(), PREFERENCE_APPLIED_HEADER.toLowerCase()]);
