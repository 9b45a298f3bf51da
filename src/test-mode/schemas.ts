import Type, { type Static } from 'typebox';
import { MAX_ADVANCE_MS } from './clock.js';

/** A test key's clock as `GET /test-clock` answers it (contract §11). */
export const TestClock = Type.Object(
  {
    now: Type.String({ format: 'date-time', maxLength: 30, description: "Your key's now: what its windows, bans, orders and sunsets go by." }),
    offsetSeconds: Type.Number({ description: "Your key's now minus the real now, in seconds (negative once a frozen clock was resumed behind it)." }),
    frozen: Type.Boolean({ description: 'Whether the clock stands still: it then moves only by `advance`, until `resume`.' }),
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
          "Where to move the clock: an instant no earlier than your key's now (`409` `clock-cannot-go-back` otherwise) and at most two years after it.",
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

const Count = (what: string) => Type.Integer({ format: 'int64', minimum: 0, description: `How many ${what} were removed.` });

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
