import Type, { type Static } from 'typebox';
import { StringEnum } from '../http/schemas.js';
import { CHECK_IDS } from './checks.js';

const Instant = (description: string) => Type.String({ format: 'date-time', maxLength: 30, description });

/** One check of a report card (docs/testing-clients.md#is-my-client-a-good-api-citizen). */
export const ReportCheck = Type.Object(
  {
    id: StringEnum(CHECK_IDS, { description: 'The check; ids are part of the contract.' }),
    title: Type.String({ maxLength: 100 }),
    status: StringEnum(['passed', 'failed', 'untested'] as const, {
      description:
        '`untested` until its situation arises, `failed` once it went wrong since `since`, else `passed` ' +
        "(`webhook-receiver`: the latest exam's).",
    }),
    seen: Type.Integer({ format: 'int64', minimum: 0, description: 'How many times its situation arose.' }),
    failed: Type.Integer({ format: 'int64', minimum: 0, description: 'How many times it went wrong.' }),
    failures: Type.Array(
      Type.Object(
        {
          requestId: Type.String({ maxLength: 128, description: 'The `X-Request-Id` of the request that went wrong.' }),
          at: Instant("When it arrived, in your key's time."),
          detail: Type.String({ maxLength: 400, description: 'What went wrong, with the figures.' }),
          log: Type.Union([Type.String({ format: 'uri', maxLength: 300 }), Type.Null()], {
            description:
              "The exchange in your key's request log (`GET /request-log/{requestId}`); null once it is gone.",
          }),
        },
        { additionalProperties: false },
      ),
      { maxItems: 10, description: 'The latest failures, newest first.' },
    ),
    advice: Type.String({ maxLength: 300, description: 'What a good client does.' }),
    docs: Type.String({
      format: 'uri',
      maxLength: 300,
      description: 'A page explaining the check: its rule and a sketch of a good client.',
    }),
  },
  { additionalProperties: false },
);

/** What `GET /report-card` answers. */
export const ReportCard = Type.Object(
  {
    since: Instant(
      "When the card started (your key's creation, or its last `DELETE /report-card`), in your key's time.",
    ),
    requests: Type.Integer({ format: 'int64', minimum: 0, description: 'How many requests were graded.' }),
    checks: Type.Array(ReportCheck, {
      minItems: CHECK_IDS.length,
      maxItems: CHECK_IDS.length,
      description: "Every check, in the contract's order.",
    }),
  },
  {
    $id: 'ReportCard',
    additionalProperties: false,
    description: "How your test key's client behaved toward the API, check by check.",
  },
);
export type ReportCard = Static<typeof ReportCard>;
