import { PREFER_HEADER, PREFERENCE_APPLIED_HEADER } from '../faults/prefer.js';
import { ETAG_HEADER, IF_NONE_MATCH_HEADER } from '../http/conditional.js';
import { ALLOW_ORIGIN_HEADER } from '../http/cors.js';
import { REQUEST_ID_HEADER } from '../http/request-id.js';
import { CACHE_CONTROL_HEADER, LOCATION_HEADER } from '../http/responses.js';
import { IDEMPOTENCY_KEY_HEADER_NAME, IDEMPOTENT_REPLAYED_HEADER } from '../idempotency/header.js';
import { API_KEY_HEADER } from '../keys/identify.js';
import { DEPRECATION_HEADER, LINK_HEADER, SUNSET_HEADER } from '../deprecation/notices.js';
import { RATE_LIMIT_HEADER_NAMES } from '../ratelimit/headers.js';
import { VERSION_HEADER } from '../versions/versions.js';
import { LAST_EVENT_ID_HEADER } from '../events/ids.js';
import { DELIVERY_HEADER_NAMES } from '../webhooks/document.js';

/**
 * Every header the document names, spelled as its RFC or draft spells it (`ETag`, `Idempotency-Key`,
 * the Standard Webhooks' `webhook-id`), each from the constant of the component that owns it. Fastify's
 * schemas name request headers in lower case, as Node hands them over; the document is given these
 * spellings (./transforms.ts), so that generated clients name their parameters one way.
 * test/openapi/document.test.ts fails on a header the document names that is not here.
 */
const SPELLINGS = [
  API_KEY_HEADER,
  IDEMPOTENCY_KEY_HEADER_NAME,
  IDEMPOTENT_REPLAYED_HEADER,
  IF_NONE_MATCH_HEADER,
  ETAG_HEADER,
  LOCATION_HEADER,
  CACHE_CONTROL_HEADER,
  PREFER_HEADER,
  PREFERENCE_APPLIED_HEADER,
  REQUEST_ID_HEADER,
  ALLOW_ORIGIN_HEADER,
  ...RATE_LIMIT_HEADER_NAMES,
  DEPRECATION_HEADER,
  SUNSET_HEADER,
  LINK_HEADER,
  ...DELIVERY_HEADER_NAMES,
  VERSION_HEADER,
  LAST_EVENT_ID_HEADER,
];

const BY_LOWER_CASE = new Map(SPELLINGS.map((name) => [name.toLowerCase(), name]));

/** The one spelling of a header the document may name; undefined for a header it does not know. */
export function headerSpelling(name: string): string | undefined {
  return BY_LOWER_CASE.get(name.toLowerCase());
}
