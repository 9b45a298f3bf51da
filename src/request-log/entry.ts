import Type, { type Static } from 'typebox';
import { StringEnum } from '../http/schemas.js';
import { CHECK_IDS } from '../report-card/checks.js';

const Headers = Type.Record(Type.String({ maxLength: 100 }), Type.String({ maxLength: 16_384 }), {
  description: 'Header names in lower case; credentials shown as their first 8 characters and `…`.',
});

/** One exchange of a test key (docs/request-log.md), as the log keeps it and answers it. */
export const LogEntry = Type.Object(
  {
    requestId: Type.String({ maxLength: 128, description: 'Its `X-Request-Id`.' }),
    at: Type.String({ format: 'date-time', maxLength: 30, description: "When it arrived, in your key's time." }),
    receivedAt: Type.String({ format: 'date-time', maxLength: 30, description: 'When it arrived, in real time.' }),
    method: Type.String({ maxLength: 10 }),
    url: Type.String({ maxLength: 16_384, description: 'Its path and query, as sent (credentials cut).' }),
    path: Type.String({ maxLength: 200, description: "The operation's path, as the document writes it." }),
    requestHeaders: Headers,
    requestBody: Type.Optional(Type.String({ maxLength: 16_384, description: 'Up to 16 KB of it.' })),
    status: Type.Union([Type.Integer({ format: 'int32', minimum: 100, maximum: 599 }), Type.Null()], {
      description: 'Null when the connection was reset or cut before an answer.',
    }),
    responseHeaders: Headers,
    responseBody: Type.Optional(Type.String({ maxLength: 16_384, description: 'Up to 16 KB of it.' })),
    truncated: Type.Optional(Type.Literal(true, { description: 'A body was longer than 16 KB: the rest is cut.' })),
    ms: Type.Integer({
      format: 'int32',
      minimum: 0,
      maximum: 2_147_483_647,
      description: 'From its arrival to its answer (an event stream: to its end).',
    }),
    ending: StringEnum(['answered', 'reset', 'cut', 'closed', 'dropped'] as const, {
      description:
        '`answered`; `reset`: the connection reset in place of the answer (a fault); `cut`: the client closed ' +
        'the connection before the answer; `closed`, `dropped`: an event stream closed by the client, or dropped.',
    }),
    fault: Type.Optional(
      Type.Object(
        {
          fault: Type.String({ maxLength: 20 }),
          by: Type.String({ maxLength: 200, description: "`Prefer`, the key's fault profile, or a scenario step." }),
        },
        { description: 'What was injected, and by what.' },
      ),
    ),
    checks: Type.Array(
      Type.Object({
        id: StringEnum(CHECK_IDS),
        outcome: StringEnum(['started', 'passed', 'failed'] as const),
        detail: Type.Optional(Type.String({ maxLength: 500 })),
      }),
      { maxItems: CHECK_IDS.length, description: "The report card's checks it started, passed or failed." },
    ),
  },
  { $id: 'LogEntry', additionalProperties: false, description: 'One exchange of your test key.' },
);
export type LogEntry = Static<typeof LogEntry>;
