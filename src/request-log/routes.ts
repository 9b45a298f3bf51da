import type { FastifyRequest } from 'fastify';
import Type from 'typebox';
import { type Cursors, scopeOf } from '../http/pagination.js';
import { ProblemError } from '../http/problems.js';
import { REQUEST_ID_PATTERN } from '../http/request-id.js';
import { problemResponses } from '../http/responses.js';
import { Page, PageQuery, ref, StringEnum } from '../http/schemas.js';
import { TAG } from '../http/tags.js';
import type { App } from '../http/types.js';
import { CHECK_IDS } from '../report-card/checks.js';
import { TEST_MODE_ABOUT, TEST_MODE_CONFIG, testKeyOf } from '../test-mode/get-clock.js';
import { NEWEST_VERSION } from '../versions/versions.js';
import { LogEntry } from './entry.js';
import { harOf } from './har.js';
import type { LogFilter, LogPage, RequestLog } from './log.js';

const LogQuery = Type.Object({
  status: Type.Optional(
    Type.String({
      pattern: '^([1-5][0-9]{2}|4xx|5xx)$',
      maxLength: 3,
      description: 'Only answers with this status, or of this class (`4xx`, `5xx`).',
    }),
  ),
  method: Type.Optional(StringEnum(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'] as const)),
  path: Type.Optional(
    Type.String({
      maxLength: 200,
      description: "Only this operation's path, as the document writes it (`/pets/{petId}`).",
    }),
  ),
  check: Type.Optional(
    StringEnum(CHECK_IDS, { description: 'Only the requests that started, passed or failed this check.' }),
  ),
  ...PageQuery.properties,
});
type LogQuery = { status?: string; method?: string; path?: string; check?: string; limit?: number; cursor?: string };

const ABOUT =
  "Your test key's exchanges, newest first by arrival: what was sent, what came back, when, what a fault " +
  'injected, and what each did to the report card. The latest 1,000 are kept; bodies up to 16 KB; credentials ' +
  `shown as their first 8 characters. ${TEST_MODE_ABOUT}`;

/** The selection a query asks for, and the scope its cursors are signed for. */
function selectionOf(request: FastifyRequest, keyId: string) {
  const { status, method, path, check, limit = 20, cursor } = request.query as LogQuery;
  const filter: LogFilter = {
    ...(status === undefined ? {} : { status: /^\d+$/.test(status) ? Number(status) : (status as '4xx' | '5xx') }),
    ...(method === undefined ? {} : { method }),
    ...(path === undefined ? {} : { path }),
    ...(check === undefined ? {} : { check }),
  };
  return { filter, limit, cursor, scope: scopeOf('request-log', keyId, { status, method, path, check }) };
}

/** A cursor's position: the arrival and row after which the next page starts. */
function after(cursors: Cursors, cursor: string | undefined, scope: string): LogPage['next'] | undefined {
  if (cursor === undefined) return undefined;
  const [receivedAt, seq] = cursors.decode(cursor, scope).split('.').map(Number) as [number, number];
  if (!Number.isSafeInteger(receivedAt) || !Number.isSafeInteger(seq)) throw new Error('a cursor this API signed');
  return { receivedAt, seq };
}

/**
 * `GET /request-log`, `GET /request-log/{requestId}` and `GET /request-log.har` (docs/request-log.md): a test key's
 * exchanges, as entries and as HAR 1.2.
 */
export function requestLogRoutes(
  app: App,
  { log, cursors, publicUrl }: { log: RequestLog; cursors: Cursors; publicUrl: string },
): void {
  const common = { tags: [TAG.testing], 'x-stability': 'experimental' };
  app.get(
    '/request-log',
    {
      config: TEST_MODE_CONFIG,
      schema: {
        operationId: 'listRequestLog',
        summary: "Your test key's request log",
        description: ABOUT,
        ...common,
        querystring: LogQuery,
        response: {
          200: Page(ref(LogEntry), 'A page of exchanges, newest first.'),
          ...problemResponses(400, 403, 429),
        },
      },
    },
    async (request) => {
      const key = testKeyOf(request);
      const { filter, limit, cursor, scope } = selectionOf(request, key.id);
      const page = await log.page(key.id, filter, limit, after(cursors, cursor, scope));
      const next = page.next && cursors.encode(`${page.next.receivedAt}.${page.next.seq}`, scope);
      return { data: page.entries, nextCursor: next };
    },
  );
  app.get(
    '/request-log.har',
    {
      config: TEST_MODE_CONFIG,
      schema: {
        operationId: 'exportRequestLog',
        summary: "Your test key's request log as HAR",
        description:
          'The same selection as `GET /request-log` (its filters, `limit` and `cursor`), as HAR 1.2: import it in ' +
          "a browser's developer tools or an API client. An exchange with no answer has status `0`. " +
          ABOUT,
        ...common,
        querystring: LogQuery,
        response: {
          200: Type.Object(
            { log: Type.Object({}, { additionalProperties: true, description: 'HAR 1.2 `log`.' }) },
            { description: 'HAR 1.2.', additionalProperties: true },
          ),
          ...problemResponses(400, 403, 429),
        },
      },
    },
    async (request, reply) => {
      const key = testKeyOf(request);
      const { filter, limit, cursor, scope } = selectionOf(request, key.id);
      const page = await log.page(key.id, filter, limit, after(cursors, cursor, scope));
      reply.header('content-disposition', `attachment; filename="petstore-${key.id}.har"`);
      return harOf(page.entries, publicUrl, NEWEST_VERSION);
    },
  );
  app.get(
    '/request-log/:requestId',
    {
      config: TEST_MODE_CONFIG,
      schema: {
        operationId: 'getRequestLogEntry',
        summary: 'One exchange of your test key',
        description: `The exchange with this \`X-Request-Id\`; another key's is a \`404\`. ${ABOUT}`,
        ...common,
        params: Type.Object({
          requestId: Type.String({
            pattern: REQUEST_ID_PATTERN,
            maxLength: 128,
            description: 'Its `X-Request-Id`.',
            example: 'order-42',
          }),
        }),
        response: { 200: ref(LogEntry), ...problemResponses(403, 404, 429) },
      },
    },
    async (request) => {
      const key = testKeyOf(request);
      const { requestId } = request.params as { requestId: string };
      const entry = await log.entry(key.id, requestId);
      if (!entry) throw new ProblemError('not-found', `Your key's log holds no request ${requestId}.`);
      return entry;
    },
  );
}
