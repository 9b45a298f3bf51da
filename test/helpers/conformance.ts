import { expect } from 'vitest';
import type { InjectOptions } from 'fastify';
import { OpenAPIBackend, SetMatchType } from 'openapi-backend';
import type { TestApp } from './app.js';
import type { Db } from '../../src/db/database.js';
import { holdWrites } from './hold-writes.js';
import { type PrismProxy, prismProxy, violationsOf } from './prism.js';
import { parseFrame } from './sse.js';

const EVENT_STREAM = 'text/event-stream';

/**
 * Two independent validators of real traffic against the served document (test/openapi/conformance.test.ts).
 * Every request goes over a socket through Stoplight Prism's validating proxy, which must report no
 * violation of the answer; and openapi-backend (its own Ajv) checks each answer too: its status must be
 * documented for its operation, its media type must be the documented one, its body must match that
 * schema, its headers must match the declared ones, and every header the document declares required
 * for that response must be present.
 */
interface Doc {
  paths: Record<string, Record<string, { operationId: string; responses: Record<string, Resp> }>>;
  components: { headers: Record<string, { schema: object; required?: boolean }> };
}
type Header = { $ref: string } | { schema: object; required?: boolean };
interface Resp {
  content?: Record<string, { schema: object }>;
  headers?: Record<string, Header>;
}

/** An answer as both validators read it. */
export interface Answer {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
}

export class Validators {
  /** `<operationId> <status>` of every answer. */
  readonly seen: string[] = [];
  /** Every way an answer departed from the document. */
  readonly mismatches: string[] = [];

  private constructor(
    private readonly doc: Doc,
    private readonly prism: PrismProxy,
    private readonly api: OpenAPIBackend,
  ) {}

  /**
   * Both validators in front of `t`'s public app, which starts
   * listening, each with the document of `version` (default the newest).
   */
  static async start(t: TestApp, version?: string): Promise<Validators> {
    const served = (await t.app.inject({ url: version ? `/openapi.json?version=${version}` : '/openapi.json' })).body;
    const doc = JSON.parse(served) as Doc;
    const prism = await prismProxy(served, await t.app.listen({ host: '127.0.0.1', port: 0 }));
    // openapi-backend validates `application/json` bodies only; problems are `application/problem+json`.
    // Its copy of the document lists each body under `application/json` (same schema), and `check`
    // checks the real media type itself.
    const asJson = JSON.parse(
      JSON.stringify(doc).replaceAll('"application/problem+json"', '"application/json"'),
    ) as Doc;
    // It also takes every declared header as required, whatever `required` says: its copy leaves the
    // optional ones out, and `check` checks those itself.
    for (const methods of Object.values(asJson.paths)) {
      for (const op of Object.values(methods)) {
        for (const response of Object.values(op.responses)) {
          for (const [name, header] of Object.entries(response.headers ?? {}))
            if (!requiredHeader(doc, header)) delete response.headers![name];
        }
      }
    }
    // `quick` skips its check of the document itself, which knows only OpenAPI 3.0 (it refuses 3.1's
    // license `identifier`); the schemas it validates responses with are plain JSON Schema either way.
    const api = new OpenAPIBackend({
      definition: asJson as never,
      quick: true,
      validate: true,
      ajvOpts: { strict: false },
    });
    await api.init();
    return new Validators(doc, prism, api);
  }

  stop(): Promise<void> {
    return this.prism.stop();
  }

  /** Sends a request as `inject` would take it, over a socket through Prism's proxy, and checks the answer. */
  async send(operationId: string, { method = 'GET', url, headers = {}, payload }: InjectOptions): Promise<Answer> {
    const sent: Record<string, string> = { ...(headers as Record<string, string>) };
    let body: string | undefined;
    if (payload !== undefined) {
      body = typeof payload === 'string' ? payload : JSON.stringify(payload);
      sent['content-type'] ??= 'application/json';
    }
    const response = await fetch(`${this.prism.url}${url as string}`, {
      method: method as string,
      headers: sent,
      body,
    });
    return this.check(operationId, {
      statusCode: response.status,
      headers: Object.fromEntries(response.headers),
      body: await response.text(),
    });
  }

  /** Every documented status of every operation that no answer had. */
  missing(): string[] {
    return Object.values(this.doc.paths).flatMap((methods) =>
      Object.values(methods).flatMap((op) =>
        Object.keys(op.responses)
          .filter((status) => !this.seen.includes(`${op.operationId} ${status}`))
          .map((status) => `${op.operationId} ${status}`),
      ),
    );
  }

  /**
   * An event stream's body (a stream that ended): its frames as WHATWG server-sent events, each event's `data` an
   * `Event` as `GET /events/{eventId}` answers it, its `id` the event's and its `event` the event's type.
   */
  #checkEvents(where: string, text: string): void {
    for (const raw of text.split('\n\n').filter((frame) => frame !== '')) {
      const frame = parseFrame(raw);
      if (frame.comment !== undefined) continue;
      if (frame.retry !== undefined) {
        if (!/^\d+$/.test(frame.retry)) this.mismatches.push(`${where}: retry ${frame.retry}`);
        continue;
      }
      const event = JSON.parse(frame.data ?? 'null') as { id?: string; type?: string } | null;
      const checked = this.api.validator.validateResponse(event, 'getEvent', 200);
      if (!checked.valid) this.mismatches.push(`${where}: event ${JSON.stringify(checked.errors)}`);
      if (event?.id !== frame.id || event?.type !== frame.event)
        this.mismatches.push(`${where}: frame ${JSON.stringify(raw)} names another event than its data`);
    }
  }

  /** Records every way the response departs from the document. */
  private check(operationId: string, response: Answer): Answer {
    const { doc, mismatches } = this;
    const status = response.statusCode;
    this.seen.push(`${operationId} ${status}`);
    const where = `${operationId} → ${status}`;
    // Prism's word on the answer (its word on a request sent invalid on purpose is expected).
    for (const violation of violationsOf(response.headers['sl-violations'])) {
      if (violation.location[0] === 'response')
        mismatches.push(`${where}: Prism: ${violation.message} at ${violation.location.join('.')}`);
    }
    const documented = operationOf(doc, operationId).responses[String(status)];
    if (!documented) {
      mismatches.push(`${where}: status not documented`);
      return response;
    }
    const [mediaType] = Object.keys(documented.content ?? {});
    const sentType = String(response.headers['content-type'] ?? '').split(';')[0];
    if (mediaType && sentType !== mediaType)
      mismatches.push(`${where}: content-type ${sentType}, documented ${mediaType}`);
    if (mediaType === EVENT_STREAM) this.#checkEvents(where, response.body);
    else if (mediaType) {
      const body = this.api.validator.validateResponse(JSON.parse(response.body), operationId, status);
      if (!body.valid) mismatches.push(`${where}: body ${JSON.stringify(body.errors)}`);
    }
    const headers = this.api.validator.validateResponseHeaders(response.headers, operationId, {
      statusCode: status,
      setMatchType: SetMatchType.Superset,
    });
    if (!headers.valid) mismatches.push(`${where}: headers ${JSON.stringify(headers.errors)}`);
    for (const [name, declared] of Object.entries(documented.headers ?? {})) {
      const sent = response.headers[name.toLowerCase()];
      if (requiredHeader(doc, declared) && sent === undefined)
        mismatches.push(`${where}: declared header ${name} missing`);
      // An optional header, when sent, holds the one value its schema allows.
      const allowed =
        !('$ref' in declared) && !requiredHeader(doc, declared)
          ? (declared.schema as { const?: string }).const
          : undefined;
      if (sent !== undefined && allowed !== undefined && sent !== allowed)
        mismatches.push(`${where}: header ${name} is ${String(sent)}, documented ${allowed}`);
    }
    return response;
  }
}

/** Whether the document says the header is always there (`required`, on it or on the component it names). */
function requiredHeader(doc: Doc, header: Header): boolean {
  const resolved = '$ref' in header ? doc.components.headers[header.$ref.split('/').pop()!] : header;
  return resolved?.required === true;
}

function operationOf(doc: Doc, operationId: string): { responses: Record<string, Resp> } {
  for (const methods of Object.values(doc.paths)) {
    for (const op of Object.values(methods)) if (op.operationId === operationId) return op;
  }
  throw new Error(`no operation ${operationId}`);
}

/**
 * Sends one request three times at once while the store's writes are held, as another writer would
 * hold them: the first to arrive waits for the store, the other two are refused at once as in
 * progress; then the store lets the first through. The statuses, ascending.
 */
export async function threeAtOnce(db: Db, send: () => Promise<Answer>): Promise<number[]> {
  const held = await holdWrites(db);
  const answers = [send(), send(), send()];
  await new Promise<void>((resolve) => {
    let refused = 0;
    for (const answer of answers) void answer.then(() => ++refused === 2 && resolve());
  });
  await held.release();
  return (await Promise.all(answers)).map((answer) => answer.statusCode).sort((a, b) => a - b);
}

/**
 * The operations of a test key's clock, data (test-mode/) and report card (report-card/),
 * as a request without a key sends them: like `/usage`, they count nothing.
 */
export const testModeSamples: Record<string, InjectOptions> = {
  getTestClock: { url: '/test-clock' },
  advanceTestClock: { method: 'POST', url: '/test-clock/advance', payload: { seconds: 1 } },
  freezeTestClock: { method: 'POST', url: '/test-clock/freeze' },
  resumeTestClock: { method: 'POST', url: '/test-clock/resume' },
  resetTestData: { method: 'DELETE', url: '/test-data' },
  getReportCard: { url: '/report-card' },
  resetReportCard: { method: 'DELETE', url: '/report-card' },
  armTestScenario: { method: 'PUT', url: '/test-scenario', payload: { steps: [{ answer: 'pass' }] } },
  getTestScenario: { url: '/test-scenario' },
  disarmTestScenario: { method: 'DELETE', url: '/test-scenario' },
  listRequestLog: { url: '/request-log' },
  exportRequestLog: { url: '/request-log.har' },
  getRequestLogEntry: { url: '/request-log/nowhere' },
};

/**
 * The event stream's answers: a stream that ends (a test key's `drop`, after the first event written after `after`),
 * an id the service does not keep (`400`), and the sixth stream of a key that holds five (`409`).
 */
export async function streamTraffic(
  t: TestApp,
  send: (operationId: string, options: InjectOptions) => Promise<Answer>,
  tester: string,
  after: string,
): Promise<void> {
  const as = (extra: Record<string, string> = {}) => ({ 'x-api-key': tester, ...extra });
  await send('streamEvents', { url: `/events/stream?after=${after}`, headers: as({ prefer: 'fault=drop' }) });
  await send('streamEvents', { url: '/events/stream?after=evt_x', headers: as() });
  const held = await Promise.all(
    [1, 2, 3, 4, 5].map(() => t.app.inject({ url: '/events/stream', headers: as(), payloadAsStream: true })),
  );
  await send('streamEvents', { url: '/events/stream', headers: as() });
  for (const stream of held) stream.stream().destroy();
}

/**
 * A test key's clock and data, and its child keys (test-mode/), as the conformance suite sends them:
 * moved, refused (a live key, going back, a bad body, a reused `Idempotency-Key`, the 101st child),
 * made, deleted and reset.
 */
export async function testModeTraffic(
  t: TestApp,
  send: (operationId: string, options: InjectOptions) => Promise<Answer>,
  { tester, live }: { tester: string; live: string },
) {
  const as = (k: string, extra: Record<string, string> = {}) => ({ 'x-api-key': k, ...extra });
  // A test key's clock and data: moved, refused (a live key, going back, a bad body, a reused Idempotency-Key), reset.
  const clockMove = (
    operationId: string,
    how: string,
    k: string,
    payload?: object,
    extra: Record<string, string> = {},
  ) =>
    send(operationId, {
      method: 'POST',
      url: `/test-clock/${how}`,
      headers: as(k, extra),
      ...(payload ? { payload } : {}),
    });
  await send('getTestClock', { url: '/test-clock', headers: as(tester) });
  await send('getTestClock', { url: '/test-clock', headers: as(live) });
  for (const k of [tester, live]) {
    await send('getReportCard', { url: '/report-card', headers: as(k) });
    await send('resetReportCard', { method: 'DELETE', url: '/report-card', headers: as(k) });
  }
  await clockMove('advanceTestClock', 'advance', tester, { seconds: 60 }, { 'idempotency-key': 'c1' });
  await clockMove('advanceTestClock', 'advance', tester, { seconds: 60 }, { 'idempotency-key': 'c1' });
  await clockMove('advanceTestClock', 'advance', tester, { seconds: 61 }, { 'idempotency-key': 'c1' });
  await clockMove('advanceTestClock', 'advance', tester, { to: '2000-01-01T00:00:00Z' });
  await clockMove('advanceTestClock', 'advance', tester, {});
  await clockMove('advanceTestClock', 'advance', live, { seconds: 1 });
  for (const [operationId, how] of [
    ['freezeTestClock', 'freeze'],
    ['resumeTestClock', 'resume'],
  ] as const) {
    await clockMove(operationId, how, tester);
    await clockMove(operationId, how, live);
    await clockMove(operationId, how, tester, undefined, { 'idempotency-key': 'c1' });
    expect(
      await threeAtOnce(t.db, () =>
        clockMove(operationId, how, tester, undefined, { 'idempotency-key': `at-once-${how}` }),
      ),
      operationId,
    ).toEqual([200, 409, 409]);
  }
  // Child test keys: made, refused (a live key, a body of another type, the 101st), deleted.
  const parent = await t.newKey({ plan: 'pro', test: true });
  const child = await send('createTestKey', { method: 'POST', url: '/test-keys', headers: as(parent) });
  await send('createTestKey', { method: 'POST', url: '/test-keys', headers: as(live) });
  await send('createTestKey', {
    method: 'POST',
    url: '/test-keys',
    headers: as(parent, { 'content-type': 'text/plain' }),
    payload: 'x',
  });
  expect(
    await threeAtOnce(t.db, () =>
      send('createTestKey', {
        method: 'POST',
        url: '/test-keys',
        headers: as(parent, { 'idempotency-key': 'at-once' }),
      }),
    ),
  ).toEqual([201, 409, 409]);
  // Up to the limit, around the validators: the 101st is the 409 they see.
  for (let i = 0; i < 98; i++) await t.app.inject({ method: 'POST', url: '/test-keys', headers: as(parent) });
  await send('createTestKey', { method: 'POST', url: '/test-keys', headers: as(parent) });
  await send('deleteTestKey', {
    method: 'DELETE',
    url: `/test-keys/${JSON.parse(child.body).id}`,
    headers: as(parent),
  });
  await send('deleteTestKey', { method: 'DELETE', url: '/test-keys/key_00', headers: as(parent) });
  await send('deleteTestKey', { method: 'DELETE', url: '/test-keys/nope', headers: as(parent) });
  await send('deleteTestKey', { method: 'DELETE', url: '/test-keys/key_00', headers: as(live) });
  const scratch = await t.newKey({ plan: 'pro', test: true });
  await send('resetTestData', { method: 'DELETE', url: '/test-data', headers: as(scratch) });
  await send('resetTestData', { method: 'DELETE', url: '/test-data', headers: as(live) });
  // A test key's script: armed (steps of its own, a named scenario), refused (bad steps, a live key), read, disarmed.
  const arm = (k: string, payload: object) =>
    send('armTestScenario', { method: 'PUT', url: '/test-scenario', headers: as(k), payload });
  await arm(scratch, { steps: [{ match: 'GET /pets/{petId}', answer: '503', latencyMs: 0, times: 2 }] });
  await arm(scratch, { scenario: 'retry-after-503' });
  await arm(scratch, { steps: [{ answer: 'never' }] });
  await arm(scratch, { steps: [{ match: 'GET /nowhere', answer: 'pass' }] });
  await arm(live, { scenario: 'retry-after-503' });
  for (const k of [scratch, live]) {
    await send('getTestScenario', { url: '/test-scenario', headers: as(k) });
    await send('disarmTestScenario', { method: 'DELETE', url: '/test-scenario', headers: as(k) });
  }
  await send('getTestScenario', { url: '/test-scenario', headers: as(scratch) });
  // A test key's request log: read, exported, one entry, another's (404), a bad filter, a live key's.
  await t.request({ url: '/pets/1', headers: as(scratch, { 'x-request-id': 'logged-1' }) });
  for (const k of [scratch, live]) {
    await send('listRequestLog', { url: '/request-log?limit=2', headers: as(k) });
    await send('exportRequestLog', { url: '/request-log.har?limit=2', headers: as(k) });
    await send('getRequestLogEntry', { url: '/request-log/logged-1', headers: as(k) });
  }
  await send('getRequestLogEntry', { url: '/request-log/nowhere', headers: as(scratch) });
  await send('listRequestLog', { url: '/request-log?status=abc', headers: as(scratch) });
  await send('exportRequestLog', { url: '/request-log.har?check=nope', headers: as(scratch) });
}
