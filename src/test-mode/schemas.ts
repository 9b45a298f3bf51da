import { MAX_LIMIT } from '../ratelimit/plans.js';
import Type, { type Static } from 'typebox';
import { MAX_ADVANCE_MS } from './clock.js';

/** A test key's clock as `GET /test-clock` answers it (docs/testing-clients.md#testing-your-client-in-seconds). */
export const TestClock = Type.Object(
  {
    now: Type.String({
      format: 'date-time',
      maxLength: 30,
      description: "Your key's now: what its windows, bans, orders and sunsets go by.",
    }),
    offsetSeconds: Type.Number({
      description:
        "Your key's now minus the real now, in seconds (negative once a frozen clock was resumed behind it).",
    }),
    frozen: Type.Boolean({
      description: 'Whether the clock stands still: it then moves only by `advance`, until `resume`.',
    }),
  },
  { $id: 'TestClock', additionalProperties: false, description: "Your test key's clock." },
);
export type TestClock = Static<typeof TestClock>;

const MAX_ADVANCE_SECONDS = MAX_ADVANCE_MS / 1000;

/** What `POST /test-clock/advance` takes: `seconds` or `to`, one of the two. */
export const ClockAdvance = Type.Object(
  {
    seconds: Type.Optional(
      Type.Integer({
        format: 'int64',
        minimum: 1,
        maximum: MAX_ADVANCE_SECONDS,
        description: `How far to move the clock, in seconds: 1 to ${MAX_ADVANCE_SECONDS} (two years).`,
      }),
    ),
    to: Type.Optional(
      Type.String({
        format: 'date-time',
        maxLength: 35,
        description:
          "Where to move the clock: an instant no earlier than your key's now (`409` `clock-cannot-go-back` " +
          'otherwise) and at most two years after it.',
      }),
    ),
  },
  {
    $id: 'ClockAdvance',
    additionalProperties: false,
    minProperties: 1,
    maxProperties: 1,
    description: 'Either `seconds` or `to`, not both.',
    examples: [{ seconds: 60 }, { to: '2027-07-01T00:00:00Z' }],
  },
);
export type ClockAdvance = Static<typeof ClockAdvance>;

const Count = (what: string) =>
  Type.Integer({ format: 'int64', minimum: 0, description: `How many ${what} were removed.` });

/** What `DELETE /test-data` answers: how many of each were removed. */
export const TestDataRemoved = Type.Object(
  {
    orders: Count('orders'),
    events: Count('events'),
    webhookEndpoints: Count('webhook endpoints'),
    deliveries: Count('webhook deliveries'),
  },
  { $id: 'TestDataRemoved', additionalProperties: false, description: 'What the reset removed.' },
);
export type TestDataRemoved = Static<typeof TestDataRemoved>;

/** A child test key as `POST /test-keys` answers it: the only time its key is shown. */
export const TestKey = Type.Object(
  {
    id: Type.String({ maxLength: 40, description: "The child key's id (for `DELETE /test-keys/{keyId}`)." }),
    key: Type.String({
      maxLength: 60,
      description:
        'The child key itself, `pet_test_…`: shown this once (and again to a retry with the same `Idempotency-Key`).',
    }),
    name: Type.String({ maxLength: 100 }),
    plan: Type.String({
      maxLength: 20,
      description: "Your key's plan: a child has its parent's plan, limits and version.",
    }),
    apiVersion: Type.String({ maxLength: 10 }),
    parentId: Type.String({ maxLength: 40, description: 'Your key: the parent whose reset removes this child too.' }),
    createdAt: Type.String({ format: 'date-time', maxLength: 30 }),
  },
  { $id: 'TestKey', additionalProperties: false, description: 'A child test key, with its own clock and data.' },
);
export type TestKey = Static<typeof TestKey>;

/** What `POST /test-keys` may ask of the child: lower limits than its parent's. */
export const TestKeyLimits = Type.Object(
  {
    perMinute: Type.Optional(
      Type.Integer({
        format: 'int32',
        minimum: 1,
        maximum: MAX_LIMIT,
        description: "At most your key's per-minute limit.",
      }),
    ),
    perDay: Type.Optional(
      Type.Integer({
        format: 'int32',
        minimum: 1,
        maximum: MAX_LIMIT,
        description: "At most your key's per-day limit.",
      }),
    ),
  },
  {
    $id: 'TestKeyLimits',
    additionalProperties: false,
    description: "The child's own limits, each at most your key's (default: your key's).",
  },
);
export type TestKeyLimits = Static<typeof TestKeyLimits>;

export const TestKeyParams = Type.Object({
  keyId: Type.String({
    minLength: 1,
    maxLength: 40,
    pattern: '^key_[0-9a-f]+$',
    description: "The child key's id.",
    example: 'key_0123456789abcdef',
  }),
});
