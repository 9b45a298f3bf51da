/**
 * Every problem type the service can emit (RFC 9457), with the text of its `/problems/<slug>` page.
 * A problem type exists here once; responses, the OpenAPI document and the problem pages read it
 * (a problem as sent: ./problems.ts).
 */
export const PROBLEM_TYPES = {
  'invalid-request': {
    status: 400,
    title: 'Invalid request',
    description:
      'Part of the request is not valid: a path or query parameter, a header or the body. The `errors` member ' +
      'lists every invalid input as `{in, name, message}`; fix them all and send the request again.',
  },
  unauthorized: {
    status: 401,
    title: 'Missing or invalid API key',
    description:
      'Every API operation needs a valid key in the `X-API-Key` header, or an access token of one in ' +
      '`Authorization: Bearer` (`POST /oauth/token`). The key is missing, is not of the form `pet_…`, is unknown, ' +
      'or was revoked. Requests without a valid key are rate limited per client address.',
  },
  'invalid-token': {
    status: 401,
    title: 'Invalid access token',
    description:
      "The `Authorization: Bearer` token is expired (in your key's time: a test clock's advance expires it), was " +
      'not issued by this API (forged, changed, signed with a key or an algorithm it does not use), is for another ' +
      'audience, or belongs to a revoked key. `WWW-Authenticate` says which (RFC 6750 §3). Get a new token from ' +
      '`POST /oauth/token`, once, and send it in place of the old: sending an expired token again never helps. A ' +
      "token that is not this API's counts against your address, like an unknown key.",
  },
  'insufficient-scope': {
    status: 403,
    title: 'Insufficient scope',
    description:
      'The access token does not hold the scope this operation needs: `scope` (and `WWW-Authenticate`) names it. ' +
      'Ask `POST /oauth/token` for a token with that scope (no `scope`: all of them).',
  },
  'not-found': {
    status: 404,
    title: 'Not found',
    description: 'There is nothing at this path, or the record does not exist, or it belongs to another API key.',
  },
  'method-not-allowed': {
    status: 405,
    title: 'Method not allowed',
    description:
      'The path exists but does not support this method. The `Allow` header lists the methods it does support.',
  },
  'pet-not-available': {
    status: 409,
    title: 'Pet not available',
    description: 'Only a pet whose status is `available` can be ordered.',
  },
  'order-not-cancellable': {
    status: 409,
    title: 'Order cannot be cancelled',
    description:
      'Only a `placed` or `approved` order can be cancelled: a delivered order can no longer be. Cancelling an ' +
      'order that is already cancelled succeeds and changes nothing.',
  },
  'order-not-advanceable': {
    status: 409,
    title: 'Order cannot be advanced',
    description:
      'A `delivered` or `cancelled` order has reached the end of its lifecycle: `advance` has no step left to ' +
      'take. Place a new order to go through the steps again.',
  },
  'event-id-unknown': {
    status: 400,
    title: 'Unknown event id',
    description:
      'The stream was asked to resume after an event (`Last-Event-ID`, or `after`) that is not one of your events ' +
      'the service still keeps: it never was, or it is past the retention period. No stream was opened. Open the ' +
      'stream without an id to follow events from now on, and catch up with `GET /events`.',
  },
  'stream-limit': {
    status: 409,
    title: 'Too many open streams',
    description:
      'A key holds at most its allowance of open event streams (`GET /events/stream`), across every instance. ' +
      'Close one you no longer read, or share one stream among your readers.',
  },
  'webhook-endpoint-limit': {
    status: 409,
    title: 'Too many webhook endpoints',
    description:
      'A key has at most its allowance of webhook endpoints. Delete one you no longer use, or send several event ' +
      'types to one endpoint.',
  },
  'test-key-required': {
    status: 403,
    title: 'Test key required',
    description:
      'This operation is for test keys (`pet_test_…`) only: it lets a client practise against moves that live ' +
      'orders only make on their own schedule. Create a test key with `petstore keys create --test`, or wait for ' +
      'the live order to move.',
  },
  'test-key-limit': {
    status: 409,
    title: 'Too many child test keys',
    description:
      'A test key has at most 100 child keys alive (`POST /test-keys`): one for each job of a parallel test run. ' +
      'Delete the ones a finished run no longer needs (`DELETE /test-keys/{keyId}`), or reset your key (`DELETE ' +
      '/test-data`), which deletes them all.',
  },
  'clock-cannot-go-back': {
    status: 409,
    title: 'Test clock cannot go back',
    description:
      "A test key's clock only moves forward: `POST /test-clock/advance` with a `to` before the key's now would " +
      'undo what already happened in its time (orders moved, bans ended). The clock did not move. Advance to a ' +
      'later instant, or reset the key (`DELETE /test-data`) to put its clock back to the real time along with ' +
      'everything it made.',
  },
  sunset: {
    status: 410,
    title: 'Operation sunset',
    description:
      'This operation was deprecated and has reached its sunset date: it no longer answers. Its `Deprecation`, ' +
      '`Sunset` and `Link` headers told clients in advance. See /docs/deprecations.',
  },
  'unknown-version': {
    status: 400,
    title: 'Unknown API version',
    description:
      'The `Petstore-Version` header names no version of the API. The `versions` member lists those there are ' +
      '(also at `GET /versions`); send one of them, or no header to get the version your key is pinned to.',
  },
  'version-sunset': {
    status: 410,
    title: 'API version sunset',
    description:
      'The version this request was answered in (its `Petstore-Version` header, or the version your key is pinned ' +
      'to) has reached its sunset and no longer answers. Its `Deprecation`, `Sunset` and `Link` headers told ' +
      'clients in advance. Move to a newer version: see /docs/versions for what changed, then send ' +
      '`Petstore-Version` or pin your key to it.',
  },
  'request-timeout': {
    status: 408,
    title: 'Request timeout',
    description:
      'The request (its headers, or its body) did not arrive within the time the service allows, and the ' +
      'connection was closed. Send the whole request promptly.',
  },
  'expectation-failed': {
    status: 417,
    title: 'Expectation failed',
    description:
      'The request carried an `Expect` header the service cannot meet. The only expectation it knows is ' +
      '`100-continue`; send the request without any other.',
  },
  'payload-too-large': {
    status: 413,
    title: 'Payload too large',
    description: 'The request body is larger than the service accepts.',
  },
  'headers-too-large': {
    status: 431,
    title: 'Request headers too large',
    description: 'The request headers are larger than the service accepts (16 KiB in all); the connection was closed.',
  },
  'unsupported-media-type': {
    status: 415,
    title: 'Unsupported media type',
    description: 'Request bodies must be JSON, sent with `Content-Type: application/json`.',
  },
  'idempotency-key-reused': {
    status: 422,
    title: 'Idempotency key reused with another request',
    description:
      'An `Idempotency-Key` may be replayed only with the same request body within the idempotency window. Use a ' +
      'new key for a new request.',
  },
  'idempotency-key-in-progress': {
    status: 409,
    title: 'A request with this idempotency key is in progress',
    description:
      'The original request with this `Idempotency-Key` is still being processed. Retry after a moment: once it is ' +
      'done, a retry with the same key and body gets its response.',
  },
  'too-many-connections': {
    status: 429,
    title: 'Too many connections',
    description:
      'The client address already holds as many connections as the service allows one address ' +
      '(`MAX_CONNECTIONS_PER_ADDRESS`); this one was closed before any request was read. Reuse connections ' +
      '(keep-alive) or close some.',
  },
  'pipelining-flood': {
    status: 429,
    title: 'Connections refused after a pipelining flood',
    description:
      'A connection from the client address sent more pipelined requests than the service holds unanswered for one ' +
      "connection without reading the answers, so it was closed, and for a while the address's connections are " +
      'closed before any request is read. Wait the number of seconds in `Retry-After`. Pipelined requests are ' +
      'answered in order; a connection with several unanswered is not read until the client reads an answer.',
  },
  'rate-limited': {
    status: 429,
    title: 'Too many requests',
    description:
      'The request exceeds a limit of your plan. Wait the number of seconds in `Retry-After` (also in the ' +
      '`retryAfter` member) before retrying, and back off exponentially if you are refused again. `window` says ' +
      'which limit, `minute` or `day`, refused the request. A client that keeps sending before the wait of its ' +
      'previous 429 has passed is banned for a while; one that waits every `Retry-After` it is given never is.',
  },
  'key-banned': {
    status: 429,
    title: 'Temporarily banned',
    description:
      'The API key (or, without a key, the client address) kept sending requests after being rate limited, ' +
      'without waiting the `Retry-After` it was given, and is banned until the time given by `Retry-After`. ' +
      'Requests during a ban do not extend it.',
  },
  'uncounted-throttled': {
    status: 429,
    title: 'Throttled on a path that counts nothing',
    description:
      'The paths that count toward no plan (`/`, the docs, the document, the problem, check and scenario pages, ' +
      "`GET /usage`, `GET /versions`, `GET /scenarios`, and a test key's clock, reset, script and report card) are " +
      'throttled by a policy of ' +
      'their own, `uncounted`, so that nobody can send them without limit: per key where a valid key is sent, per ' +
      'client address otherwise, so that one key (or one CI machine driving many test keys) never spends ' +
      "another's allowance. Wait the number of seconds in `Retry-After` (also `retryAfter`). This refusal is " +
      'never a ban, and spends nothing of your plan.',
  },
  'internal-error': {
    status: 500,
    title: 'Internal server error',
    description:
      'The service failed to handle the request. Nothing about the failure is disclosed; quote the `X-Request-Id` ' +
      'when you report it.',
  },
  'service-unavailable': {
    status: 503,
    title: 'Service unavailable',
    description:
      'A store the service needs cannot be reached just now. Retry after the number of seconds in `Retry-After`.',
  },
} as const satisfies Record<string, { status: number; title: string; description: string }>;

export type ProblemSlug = keyof typeof PROBLEM_TYPES;

/** What a problem page says that other components decide (the docs pass them in). */
export interface ProblemFacts {
  /** The ban rules in force, in words (ratelimit/ban-prose.ts). */
  bans: string;
  /** How long an `Idempotency-Key` is remembered, in words (idempotency/window.ts). */
  idempotencyWindow: string;
  /** How many webhook endpoints a key may have (webhooks/schemas.ts). */
  maxWebhookEndpoints: number;
  /** The uncounted policy's numbers, in words (ratelimit/plans.ts). */
  uncounted: string;
}

/** A problem type's explanation, as its page says it, with the facts in force. */
export function problemDescription(
  slug: ProblemSlug,
  { bans, idempotencyWindow, maxWebhookEndpoints, uncounted }: ProblemFacts,
): string {
  const { description } = PROBLEM_TYPES[slug];
  if (slug === 'key-banned') return `${description} ${bans}`;
  if (slug === 'uncounted-throttled') return `${description} The policy allows ${uncounted}.`;
  if (slug === 'idempotency-key-reused') return description.replace('the idempotency window', idempotencyWindow);
  if (slug === 'webhook-endpoint-limit') return description.replace('its allowance of', String(maxWebhookEndpoints));
  return description;
}

export const PROBLEM_SLUGS = Object.keys(PROBLEM_TYPES) as ProblemSlug[];
