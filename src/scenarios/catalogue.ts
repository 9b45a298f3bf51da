import type { Scenario, ScenarioCatalogue, ScenarioStep } from './schemas.js';

/**
 * The catalogue of named scenarios (docs/testing-clients.md#scenarios-a-test-can-count-on): situations a client's
 * CI can make happen on purpose, against an unmodified client, each judged by checks of the report card. An id and
 * its meaning are part of the contract: a change of meaning is a new id, and `CATALOGUE_VERSION` says when the
 * catalogue last changed.
 */
export const CATALOGUE_VERSION = '2026-11-29';

/** What a scenario is, less what the service it is served by fills in (its page's URL, a sunset's instant). */
type Entry = Omit<Scenario, 'docs'>;

const PET = 'GET /pets/{petId}';
const PETS = 'GET /pets';
const ORDER = 'POST /store/orders';
const TOKEN = 'POST /oauth/token';
const STREAM = 'GET /events/stream';
const step = (match: string | undefined, answer: ScenarioStep['answer'], times?: number): ScenarioStep => ({
  ...(match === undefined ? {} : { match }),
  answer,
  ...(times === undefined ? {} : { times }),
});

/** The catalogue's scenarios, in its order; `sunsetAt` is when `GET /pets/{petId}` answers `410` from. */
export function scenarioEntries(sunsetAt: Date): Entry[] {
  return [
    {
      id: 'retry-after-503',
      title: 'A 503, then success',
      description: 'The first `GET /pets/{petId}` meets a `503` with `Retry-After: 5`; the next is answered.',
      steps: [step(PET, '503'), step(PET, 'pass')],
      judgedBy: ['honours-retry-after'],
      clientMust: 'Read pet 1 (`GET /pets/1`) until it is answered, waiting each `Retry-After` before trying again.',
    },
    {
      id: 'backs-off-500',
      title: 'A 500 three times, then success',
      description: 'Three `GET /pets/{petId}` in a row meet a `500`; the fourth is answered.',
      steps: [step(PET, '500', 3), step(PET, 'pass')],
      judgedBy: ['backs-off'],
      clientMust:
        'Read pet 1 (`GET /pets/1`) until it is answered, retrying a `500` after an exponentially growing, jittered wait.',
    },
    {
      id: 'reset-order',
      title: "An order's answer lost",
      description:
        'The first `POST /store/orders` is carried out in full (the order is placed), then its connection is reset ' +
        'instead of answered; the next is answered.',
      steps: [step(ORDER, 'reset'), step(ORDER, 'pass')],
      judgedBy: ['idempotent-retries'],
      clientMust:
        'Place one order for pet 1 (`POST /store/orders`), retrying a reset connection with the same ' +
        '`Idempotency-Key`, so that one order results.',
    },
    {
      id: 'unavailable-order',
      title: 'A 503 on placing an order',
      description: 'The first `POST /store/orders` meets a `503` with `Retry-After: 5`; the next is answered.',
      steps: [step(ORDER, '503'), step(ORDER, 'pass')],
      judgedBy: ['idempotent-retries', 'honours-retry-after'],
      clientMust:
        'Place one order for pet 1 (`POST /store/orders`), waiting `Retry-After` after a `503` and retrying with the ' +
        'same `Idempotency-Key`.',
    },
    {
      id: 'error-order',
      title: 'A 500 on placing an order',
      description: 'The first `POST /store/orders` meets a `500`; the next is answered.',
      steps: [step(ORDER, '500'), step(ORDER, 'pass')],
      judgedBy: ['idempotent-retries'],
      clientMust:
        'Place one order for pet 1 (`POST /store/orders`), retrying a `500` after a jittered wait with the same ' +
        '`Idempotency-Key`.',
    },
    {
      id: 'rate-limited-burst',
      title: 'Ten 429s in a row',
      description:
        'The next ten requests of the key, whatever they are, meet a `429` with `Retry-After: 1`, counting toward a ' +
        'ban as real ones do; the one after is answered. A client that waits every `Retry-After` is never banned.',
      steps: [step(undefined, '429', 10), step(undefined, 'pass')],
      judgedBy: ['honours-retry-after', 'not-banned'],
      clientMust:
        'Read pet 1 (`GET /pets/1`) until it is answered, sending nothing with the key until each `Retry-After` has ' +
        'passed.',
    },
    {
      id: 'rate-limited-order',
      title: 'A 429 on placing an order',
      description: 'The first `POST /store/orders` meets a `429` with `Retry-After: 1`; the next is answered.',
      steps: [step(ORDER, '429'), step(ORDER, 'pass')],
      judgedBy: ['honours-retry-after', 'not-banned'],
      clientMust: 'Place one order for pet 1 (`POST /store/orders`), waiting `Retry-After` after a `429` and retrying.',
    },
    {
      id: 'pace-minute',
      title: "The minute's last request",
      description:
        'The key is allowed 5 requests a minute, and 4 were sent 50 seconds ago (its clock moved): the first read ' +
        "is answered with `X-RateLimit-Remaining: 0`, and the window frees a slot 10 seconds later in the key's " +
        'time. The clock runs on: a client whose first request comes more than 10 seconds after the setup finds ' +
        'the window free again, and the situation does not arise.',
      steps: [step(PET, 'pass', 3)],
      setup: { perMinute: 5, requests: 4, advanceSeconds: 50 },
      judgedBy: ['paces'],
      clientMust:
        'Read pets 1, 2 and 3 (`GET /pets/{petId}`), and whenever `X-RateLimit-Remaining` is 0, wait until the ' +
        "window frees a slot (`RateLimit`'s `t`) before the next request.",
    },
    {
      id: 'pace-day',
      title: "The day's last request",
      description:
        'The key is allowed 3 requests a day, its clock stands 15 seconds before its next UTC midnight and 2 were ' +
        'sent: the first read is answered with `X-RateLimit-Remaining: 0` until the day ends.',
      steps: [step(PET, 'pass', 2)],
      setup: { perDay: 3, beforeMidnightSeconds: 15, requests: 2 },
      judgedBy: ['paces'],
      clientMust:
        'Read pets 1 and 2 (`GET /pets/{petId}`), and whenever `X-RateLimit-Remaining` is 0, wait until the window ' +
        "frees a slot (`RateLimit`'s `t`) before the next request.",
    },
    {
      id: 'revalidate',
      title: 'Reading the same pet again',
      description: 'Four reads of one pet, each answered normally: a `304` for a client that names what it holds.',
      steps: [step(PET, 'pass', 4)],
      judgedBy: ['revalidates'],
      clientMust: 'Read pet 1 (`GET /pets/1`) four times, sending the `ETag` you hold as `If-None-Match`.',
    },
    {
      id: 'page-to-end',
      title: 'Paging a listing to its end',
      description: 'A listing of several pages, each answered normally.',
      steps: [step(PETS, 'pass', 2)],
      judgedBy: ['cursor-untouched'],
      clientMust:
        'List every pet, 5 a page (`GET /pets?limit=5`), passing each `nextCursor` back unchanged, with the same ' +
        'filters, until there is none.',
    },
    {
      id: 'version-pin',
      title: 'Every request pinned to a version',
      description: 'Two requests of the key, answered normally.',
      steps: [step(undefined, 'pass', 2)],
      judgedBy: ['pins-version'],
      clientMust: 'Read pets 1 and 2 (`GET /pets/{petId}`), sending `Petstore-Version` with every request.',
    },
    {
      id: 'sunset-gone',
      title: 'An operation past its sunset',
      description:
        `The key's clock stands past \`GET /pets/{petId}\`'s sunset (${sunsetAt.toISOString()}): it answers ` +
        '`410 Gone`, for good; the pets are still listed by `GET /pets`.',
      steps: [step(PET, 'pass'), step(PETS, 'pass')],
      setup: { advanceTo: new Date(sunsetAt.getTime() + 1000).toISOString() },
      judgedBy: ['stops-after-gone'],
      clientMust:
        'Read pet 1 with `GET /pets/{petId}`; on its `410`, stop asking for it and find pet 1 in `GET /pets` instead.',
    },
    {
      id: 'webhook-receiver',
      title: "A webhook receiver's exam",
      description:
        "The key has a webhook endpoint at the client's receiver, which the runner examines once it is ready: " +
        'eight deliveries, valid, duplicated, unsigned, tampered, stale, from the future, with a wrong secret and ' +
        'with two signatures.',
      steps: [step('POST /webhook-endpoints/{endpointId}/exam', 'pass')],
      setup: { webhookEndpoint: true },
      judgedBy: ['webhook-receiver'],
      clientMust:
        'Start a receiver on `PETSTORE_RECEIVER_PORT` that verifies every delivery with `PETSTORE_WEBHOOK_SECRET` as ' +
        'Standard Webhooks says (answering `2xx`, or `4xx` to a bad one), print `PETSTORE_READY`, and stop on ' +
        '`SIGTERM`.',
    },
    {
      id: 'flaky-listing',
      title: 'A listing that fails three times',
      description:
        'Three `GET /pets` in a row fail: a reset connection, a `500`, a reset connection; the fourth is answered.',
      steps: [step(PETS, 'reset'), step(PETS, '500'), step(PETS, 'reset'), step(PETS, 'pass')],
      judgedBy: ['backs-off'],
      clientMust:
        'List the pets (`GET /pets`) until it is answered, retrying a reset connection or a `500` after an ' +
        'exponentially growing, jittered wait.',
    },
    {
      id: 'token-reuse',
      title: 'One token for parallel callers',
      description:
        'The first access token request (`POST /oauth/token`) is answered, then eight `GET /pets/{petId}`; any ' +
        'further token request is answered too, and graded.',
      steps: [step(TOKEN, 'pass'), step(PET, 'pass', 8)],
      judgedBy: ['reuses-tokens'],
      clientMust:
        'Read pets 1 to 8 (`GET /pets/{petId}`) from eight parallel callers with `Authorization: Bearer`, sharing ' +
        'one access token got with `PETSTORE_CLIENT_ID` and `PETSTORE_CLIENT_SECRET`.',
    },
    {
      id: 'token-expiry',
      title: 'An access token that expires',
      description:
        "A token, a read with it; then the key's clock moves an hour on (the client's test moves it, as a test of " +
        'expiry does), the token is expired, and the next read with it is a `401` `invalid_token`; a new token, ' +
        'and the read again.',
      steps: [step(TOKEN, 'pass'), step(PET, 'pass'), step(TOKEN, 'pass'), step(PET, 'pass')],
      judgedBy: ['renews-expired-tokens', 'reuses-tokens'],
      clientMust:
        "Get a token (`PETSTORE_CLIENT_ID`, `PETSTORE_CLIENT_SECRET`), read pet 1 with it, move the key's clock an " +
        'hour on (`POST /test-clock/advance` with `seconds: 3600`), read pet 1 again: on its `401` ' +
        '`invalid_token`, get a new token once and read pet 1 with that.',
    },
    {
      id: 'stream-resume',
      title: 'An event stream dropped',
      description:
        'The first event stream (`GET /events/stream`) is dropped after its first event, as a proxy cutting it would; ' +
        'the next is followed.',
      steps: [step(STREAM, 'drop'), step(STREAM, 'pass')],
      judgedBy: ['resumes-streams'],
      clientMust:
        'Follow your events (`GET /events/stream`) while placing two orders for pet 1 (`POST /store/orders`), the ' +
        "second once the first one's `order.placed` has arrived; when the stream ends, wait its `retry` and " +
        "reconnect with `Last-Event-ID`, until both orders' `order.placed` events have arrived, each once.",
    },
  ];
}

/** The catalogue as `GET /scenarios` answers it: each scenario with its page's URL. */
export function scenarioCatalogue(publicUrl: string, sunsetAt: Date): ScenarioCatalogue {
  return {
    version: CATALOGUE_VERSION,
    scenarios: scenarioEntries(sunsetAt).map((entry) => ({ ...entry, docs: `${publicUrl}/scenarios/${entry.id}` })),
  };
}
