import Type, { type Static } from 'typebox';
import { ref, StringEnum } from '../http/schemas.js';
import { CHECK_IDS } from '../report-card/checks.js';

/**
 * A test key's script and the catalogue of named scenarios (docs/testing-clients.md#scenarios-a-test-can-count-on):
 * the shapes of the requests and answers of `/test-scenario` and `/scenarios`.
 */

/** What a step's request meets: a fault as `Prefer` would ask for it, or its normal answer (`pass`). */
export const STEP_ANSWERS = ['503', '500', '429', 'reset', 'drop', 'pass'] as const;
export type StepAnswer = (typeof STEP_ANSWERS)[number];

/** The most steps a script holds, and the most times one step is used. */
export const MAX_STEPS = 100;
export const MAX_TIMES = 1_000;
export const MAX_STEP_LATENCY_MS = 10_000;

export const ScenarioStep = Type.Object(
  {
    match: Type.Optional(
      Type.String({
        maxLength: 200,
        description:
          'The operation whose requests this step meets, as the document writes it (`GET /pets/{petId}`): an ' +
          'upper-case method, a space and the path template. Absent: any request of yours that counts.',
        example: 'GET /pets/{petId}',
      }),
    ),
    answer: StringEnum(STEP_ANSWERS, {
      description:
        'What the request meets, as the `Prefer` fault of the same name would: `503`, `500`, `429`, `reset` ' +
        '(handled in full, then the connection reset), `drop` (an event stream ended after its next event: ' +
        '`GET /events/stream` only), or `pass` (answered normally).',
    }),
    latencyMs: Type.Optional(
      Type.Integer({
        format: 'int32',
        minimum: 0,
        maximum: MAX_STEP_LATENCY_MS,
        description: 'A wait before the answer, in ms.',
      }),
    ),
    times: Type.Optional(
      Type.Integer({
        format: 'int32',
        minimum: 1,
        maximum: MAX_TIMES,
        description: 'How many requests the step meets (default 1).',
      }),
    ),
  },
  { $id: 'ScenarioStep', additionalProperties: false, description: 'One step of a script.' },
);
export type ScenarioStep = Static<typeof ScenarioStep>;

/** `PUT /test-scenario`: steps of your own, or a named scenario's. */
export const ScriptRequest = Type.Object(
  {
    steps: Type.Optional(Type.Array(ref(ScenarioStep), { minItems: 1, maxItems: MAX_STEPS })),
    scenario: Type.Optional(
      Type.String({ maxLength: 100, description: 'A scenario of the catalogue (`GET /scenarios`): its steps.' }),
    ),
  },
  {
    $id: 'ScriptRequest',
    additionalProperties: false,
    description: 'Either `steps` or `scenario`, not both.',
  },
);
export type ScriptRequest = Static<typeof ScriptRequest>;

const Use = Type.Object(
  {
    step: Type.Integer({ format: 'int32', minimum: 0, maximum: MAX_STEPS - 1, description: 'The step used (from 0).' }),
    requestId: Type.String({ maxLength: 128, description: 'The request that used it (its `X-Request-Id`).' }),
    at: Type.String({ format: 'date-time', maxLength: 30, description: "When, in your key's time." }),
  },
  { additionalProperties: false },
);

/** What `/test-scenario` answers: the script, where it stands, and each use so far. */
export const Script = Type.Object(
  {
    scenario: Type.Union([Type.String({ maxLength: 100 }), Type.Null()], {
      description: 'The named scenario armed, or null (steps of your own, or none armed).',
    }),
    steps: Type.Array(ref(ScenarioStep), { maxItems: MAX_STEPS }),
    next: Type.Integer({
      format: 'int32',
      minimum: 0,
      maximum: MAX_STEPS,
      description: 'The step your next matching request meets.',
    }),
    used: Type.Array(Use, {
      maxItems: MAX_STEPS * MAX_TIMES,
      description: 'Every use of a step, in order.',
    }),
    done: Type.Boolean({ description: 'Every step was used as many times as it says (true when none is armed).' }),
  },
  { $id: 'Script', additionalProperties: false, description: "A test key's script." },
);
export type Script = Static<typeof Script>;

/** What the runner does before the client starts (`petstore conformance`), in this order. */
export const ScenarioSetup = Type.Object(
  {
    perMinute: Type.Optional(
      Type.Integer({
        format: 'int32',
        minimum: 1,
        maximum: 1_000,
        description: "1. The child's per-minute limit (lower than its plan's).",
      }),
    ),
    perDay: Type.Optional(
      Type.Integer({
        format: 'int32',
        minimum: 1,
        maximum: 100_000,
        description: "1. The child's per-day limit (lower than its plan's).",
      }),
    ),
    beforeMidnightSeconds: Type.Optional(
      Type.Integer({
        format: 'int32',
        minimum: 1,
        maximum: 3_600,
        description: "2. The child's clock moved to this many seconds before its next UTC midnight.",
      }),
    ),
    requests: Type.Optional(
      Type.Integer({
        format: 'int32',
        minimum: 1,
        maximum: 100,
        description: '3. Requests the runner sends (`GET /pets?limit=<n>`, n from 1, pinned to the newest version).',
      }),
    ),
    advanceSeconds: Type.Optional(
      Type.Integer({
        format: 'int32',
        minimum: 1,
        maximum: 3_600,
        description: "4. The child's clock advanced by this many seconds.",
      }),
    ),
    advanceTo: Type.Optional(
      Type.String({
        format: 'date-time',
        maxLength: 30,
        description: "4. The child's clock moved to this instant (when it is not already past it).",
      }),
    ),
    webhookEndpoint: Type.Optional(
      Type.Boolean({
        description:
          "5. A webhook endpoint of the child at the receiver's URL; the client's receiver is examined once it is ready.",
      }),
    ),
  },
  { additionalProperties: false, description: 'What the runner does before the client starts, in the order numbered.' },
);
export type ScenarioSetup = Static<typeof ScenarioSetup>;

export const Scenario = Type.Object(
  {
    id: Type.String({ maxLength: 100, description: 'Part of the contract: a change of meaning is a new id.' }),
    title: Type.String({ maxLength: 200 }),
    description: Type.String({ maxLength: 2_000, description: 'What happens.' }),
    steps: Type.Array(ref(ScenarioStep), { minItems: 1, maxItems: MAX_STEPS }),
    setup: Type.Optional(ScenarioSetup),
    judgedBy: Type.Array(StringEnum(CHECK_IDS), {
      minItems: 1,
      maxItems: CHECK_IDS.length,
      description: "The report card's checks the scenario judges (`GET /report-card`).",
    }),
    clientMust: Type.String({ maxLength: 500, description: 'What the client under test does, in one sentence.' }),
    docs: Type.String({ format: 'uri', maxLength: 2048, description: 'Its page.' }),
  },
  { $id: 'Scenario', additionalProperties: false, description: 'A named scenario.' },
);
export type Scenario = Static<typeof Scenario>;

export const ScenarioCatalogue = Type.Object(
  {
    version: Type.String({
      format: 'date',
      maxLength: 10,
      description: 'The catalogue as of this date: ids and their meaning never change under it.',
    }),
    scenarios: Type.Array(ref(Scenario), { maxItems: 100 }),
  },
  { $id: 'ScenarioCatalogue', additionalProperties: false, description: 'The catalogue of named scenarios.' },
);
export type ScenarioCatalogue = Static<typeof ScenarioCatalogue>;
