import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { WebhookExam as Exam } from '../../src/report-card/exam.js';
import { EXAM_CASE_LIMIT_MS, EXAM_CASES } from '../../src/report-card/exam-cases.js';
import { NOT_ALLOWED } from '../../src/webhooks/destinations.js';
import { listen } from '../../src/webhooks/listen.js';
import { OLDEST_VERSION } from '../../src/versions/versions.js';
import { json, type TestApp, testApp } from '../helpers/app.js';
import { expectProblem } from '../helpers/orders.js';
import { closedLater, closeReceivers, receiverWith } from '../helpers/exam-receiver.js';
import { endpointAt, webhooksAs } from '../helpers/webhooks.js';

/**
 * The exam of a webhook receiver (docs/testing-clients.md#is-my-client-a-good-api-citizen): the CLI's receiver passes
 * it, a receiver that gets one case wrong fails that case alone, the exam changes nothing of the endpoint, and the
 * report card's `webhook-receiver` check takes the latest exam's result. The sender's timeout is 1 s here (the exam's
 * limit is the shorter of it and 5 s), so that a receiver that never answers costs a second; a disabled
 * endpoint would be disabled after 2 failed deliveries; a key's share and an endpoint's is 1 attempt.
 */

let t: TestApp;
beforeAll(async () => {
  t = await testApp({
    env: {
      WEBHOOK_TIMEOUT_SECONDS: '1',
      WEBHOOK_DISABLE_AFTER: '2',
      WEBHOOK_KEY_CONCURRENCY: '1',
      WEBHOOK_ENDPOINT_CONCURRENCY: '1',
    },
  });
});
afterAll(async () => {
  await t.close();
});

afterEach(closeReceivers);

const IDS = EXAM_CASES.map((c) => c.id);

/** The requests of a test key (and its card). */
async function testKey(apiVersion?: string) {
  const key = await t.newKey({ plan: 'business', test: true, ...(apiVersion ? { apiVersion } : {}) });
  const hooks = webhooksAs(t, key);
  const exam = (endpointId: string, requestId = 'exam') =>
    t.request({
      method: 'POST',
      url: `/webhook-endpoints/${endpointId}/exam`,
      headers: { 'x-api-key': key, 'x-request-id': requestId },
    });
  const check = async () =>
    json<{ checks: { id: string; status: string; seen: number; failures: { requestId: string; detail: string }[] }[] }>(
      await t.request({ url: '/report-card', headers: { 'x-api-key': key } }),
    ).checks.find((c) => c.id === 'webhook-receiver')!;
  return { key, hooks, exam, check };
}

/** An endpoint of `key` at the receiver, which learns its secret. */
async function endpointFor(key: string, receiver: { url: string; secrets: string[] }) {
  const endpoint = await endpointAt(t, key, receiver.url);
  receiver.secrets.push(endpoint.secret);
  return endpoint;
}

/** Runs an exam and answers it, checking its shape. */
async function examined(exam: () => ReturnType<TestApp['request']>): Promise<Exam> {
  const response = await exam();
  expect(response.statusCode, response.body).toBe(200);
  const answer = json<Exam>(response);
  expect(answer.cases.map((c) => c.id)).toEqual(IDS);
  expect(answer.passed).toBe(answer.cases.every((c) => c.passed));
  return answer;
}

const failedIds = (exam: Exam) => exam.cases.filter((c) => !c.passed).map((c) => c.id);

describe('the exam', () => {
  it('is passed by the CLI’s receiver (`petstore webhooks listen`): each case sent once, in order, each judged by its status', async () => {
    const { key, hooks, exam } = await testKey();
    const endpoint = await endpointAt(t, key, 'http://127.0.0.1:9/later');
    const lines: string[] = [];
    const server = await listen({
      host: '127.0.0.1',
      port: 0,
      secrets: [endpoint.secret],
      fail: 0,
      out: (line) => lines.push(line),
      clock: t.clock,
    });
    closedLater(server);
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
    expect((await hooks.patch(endpoint.id, { url })).statusCode).toBe(200);

    const answer = await examined(() => exam(endpoint.id));
    expect(answer.passed).toBe(true);
    expect(answer.cases).toEqual(
      EXAM_CASES.map((c) => ({
        id: c.id,
        expected: c.expected,
        got: c.expected === '2xx' ? '200' : '401',
        passed: true,
        ms: expect.any(Number),
      })),
    );
    // It printed the three it accepted (valid, duplicate, second-signature) and refused the five others.
    expect(lines.filter((line) => line.includes('webhook.test'))).toHaveLength(3);
    expect(lines.filter((line) => line.includes('refused'))).toHaveLength(5);
  });

  it('sends webhook.test events in the key’s version, of ids no stored event has; the duplicate repeats the first’s id', async () => {
    const receiver = await receiverWith(t.clock, { always: 200 });
    const { key, exam } = await testKey(OLDEST_VERSION);
    const endpoint = await endpointFor(key, receiver);
    await examined(() => exam(endpoint.id));
    const { received } = receiver;
    expect(received).toHaveLength(EXAM_CASES.length);
    const ids = received.map((r) => r.headers['webhook-id']);
    expect(ids[1]).toBe(ids[0]);
    expect(new Set(ids).size).toBe(EXAM_CASES.length - 1);
    for (const { headers, body } of received) {
      expect(headers['content-type']).toBe('application/json');
      expect(JSON.parse(body)).toMatchObject({
        id: headers['webhook-id'],
        type: 'webhook.test',
        livemode: false,
        apiVersion: OLDEST_VERSION,
        data: { endpointId: endpoint.id },
      });
      expect(String(headers['webhook-id'])).toMatch(/^evt_0[0-9a-f]{12}$/);
      expectProblem(
        await t.request({ url: `/events/${String(headers['webhook-id'])}`, headers: { 'x-api-key': key } }),
        404,
        'not-found',
      );
    }
    const [, , wrongSecret, unsigned, stale, future, tampered, second] = received;
    expect(unsigned!.headers['webhook-signature']).toBeUndefined();
    expect(Number(stale!.headers['webhook-timestamp'])).toBe(Math.floor(t.clock() / 1000) - 600);
    expect(Number(future!.headers['webhook-timestamp'])).toBe(Math.floor(t.clock() / 1000) + 600);
    expect(JSON.parse(tampered!.body)).toEqual(
      JSON.parse(received[0]!.body.replace(String(ids[0]), String(tampered!.headers['webhook-id']))),
    );
    expect(String(second!.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(String(wrongSecret!.headers['webhook-signature']).split(' ')).toHaveLength(1);
  });

  describe('fails exactly the case a receiver gets wrong', () => {
    it.each(EXAM_CASES.map((c, i) => [c.id, i] as const))(
      '%s: a receiver right about all but that one',
      async (id, at) => {
        const receiver = await receiverWith(t.clock, { invertAt: at });
        const { key, exam } = await testKey();
        const endpoint = await endpointFor(key, receiver);
        const answer = await examined(() => exam(endpoint.id));
        expect(failedIds(answer)).toEqual([id]);
        expect(answer.passed).toBe(false);
      },
    );

    it.each([
      ['answers a duplicate 409', { duplicateStatus: 409 }, ['duplicate'], '409'],
      ['accepts a delivery without a signature', { acceptsUnsigned: true }, ['unsigned'], '204'],
      ['accepts an old timestamp (but not one ahead)', { acceptsStale: true }, ['stale'], '204'],
      ['accepts a timestamp ahead (but not an old one)', { acceptsFuture: true }, ['future'], '204'],
      ['verifies a re-serialisation of the body it parsed', { reserialises: true }, ['tampered'], '204'],
      ['checks only the first signature', { firstSignatureOnly: true }, ['second-signature'], '401'],
      ['accepts any signature', { anySignature: true }, ['wrong-secret', 'tampered'], '204'],
    ] as const)('a receiver that %s', async (_, flaws, wrong, got) => {
      const receiver = await receiverWith(t.clock, flaws);
      const { key, exam } = await testKey();
      const endpoint = await endpointFor(key, receiver);
      const answer = await examined(() => exam(endpoint.id));
      expect(failedIds(answer)).toEqual(wrong);
      for (const c of answer.cases.filter((c) => !c.passed)) expect(c.got).toBe(got);
    });

    it(`fails a case with no answer within its limit (5 s, or the sender's timeout when shorter: 1 s here)`, async () => {
      expect(EXAM_CASE_LIMIT_MS).toBe(5_000);
      const receiver = await receiverWith(t.clock, { hangAt: 0 });
      const { key, exam } = await testKey();
      const endpoint = await endpointFor(key, receiver);
      const answer = await examined(() => exam(endpoint.id));
      expect(failedIds(answer)).toEqual(['valid']);
      expect(answer.cases[0]).toMatchObject({ got: 'no answer within 1 s', passed: false });
      expect(answer.cases[0]!.ms).toBeGreaterThanOrEqual(900);
      expect(answer.cases[0]!.ms).toBeLessThan(3_000);
    });

    it('fails every case of a receiver that is not there, saying so', async () => {
      const { key, exam } = await testKey();
      const endpoint = await endpointAt(t, key, 'http://127.0.0.1:9/hooks');
      const answer = await examined(() => exam(endpoint.id));
      expect(answer.passed).toBe(false);
      expect(answer.cases.map((c) => c.got)).toEqual(IDS.map(() => 'connection refused'));
    });
  });

  it('changes nothing of the endpoint: no event, no delivery in its log, no step toward disabling it, even disabled', async () => {
    const receiver = await receiverWith(t.clock, { always: 500 });
    const { key, hooks, exam } = await testKey();
    const endpoint = await endpointFor(key, receiver);
    // One real delivery in its log, failed once.
    expect((await hooks.post(`/webhook-endpoints/${endpoint.id}/test`)).statusCode).toBe(202);
    await t.dispatcher.runDue();
    const events = async () => (await t.request({ url: '/events', headers: { 'x-api-key': key } })).body;
    const log = async () => (await hooks.get(`/webhook-endpoints/${endpoint.id}/deliveries`)).body;
    const stored = async () =>
      t.db
        .selectFrom('webhook_endpoints')
        .select(['enabled', 'failed_in_row', 'disabled_reason'])
        .where('id', '=', endpoint.id)
        .executeTakeFirstOrThrow();
    const before = { events: await events(), log: await log(), stored: await stored() };
    expect(JSON.parse(before.log).data).toHaveLength(1);
    expect(before.stored).toMatchObject({ enabled: 1 });
    // Three exams of eight failed cases each: 2 failed deliveries in a row would have disabled it.
    for (let i = 0; i < 3; i++) expect(failedIds(await examined(() => exam(endpoint.id)))).toEqual(IDS);
    expect(receiver.requests).toBe(1 + 3 * EXAM_CASES.length);
    expect({ events: await events(), log: await log(), stored: await stored() }).toEqual(before);
    expect(json(await hooks.get(`/webhook-endpoints/${endpoint.id}`))).toMatchObject({ enabled: true });

    // A disabled endpoint is examined too, and stays as it was.
    expect((await hooks.patch(endpoint.id, { enabled: false })).statusCode).toBe(200);
    await examined(() => exam(endpoint.id));
    expect(json(await hooks.get(`/webhook-endpoints/${endpoint.id}`))).toMatchObject({
      enabled: false,
      disabledReason: 'by-request',
    });
    expect(await log()).toBe(before.log);
  });

  it('is for test keys’ endpoints: a live key’s is a 403 test-key-required; an unknown or another key’s endpoint a 404', async () => {
    const receiver = await receiverWith(t.clock);
    const live = await t.newKey('business');
    const liveEndpoint = await endpointFor(live, receiver);
    const liveExam = await t.request({
      method: 'POST',
      url: `/webhook-endpoints/${liveEndpoint.id}/exam`,
      headers: { 'x-api-key': live },
    });
    expectProblem(liveExam, 403, 'test-key-required');
    const { exam } = await testKey();
    expectProblem(await exam('we_000000000000000000000000'), 404, 'not-found');
    expectProblem(await exam('nope'), 400, 'invalid-request');
    const other = await testKey();
    const theirs = await endpointFor(other.key, receiver);
    expectProblem(await exam(theirs.id), 404, 'not-found');
    expect(receiver.requests).toBe(0);
  });

  it('keeps to the key’s share of the sender: two exams at once send one case at a time (a share of 1 here)', async () => {
    const receiver = await receiverWith(t.clock, { delayMs: 20 });
    const { key, exam } = await testKey();
    const a = await endpointFor(key, receiver);
    const b = await endpointFor(key, receiver);
    const [first, second] = await Promise.all([examined(() => exam(a.id)), examined(() => exam(b.id))]);
    expect([first.passed, second.passed]).toEqual([true, true]);
    expect(receiver.requests).toBe(2 * EXAM_CASES.length);
    expect(receiver.mostInFlight).toBe(1);
  });
});

describe('an exam of a receiver that never answers', () => {
  // The sender's shares as deployed (8 attempts a key, 4 an endpoint); the webhook timeout 1 s, so that
  // `valid` waits 1 s and the other cases until 2 s after the exam began.
  let shared: TestApp;
  beforeAll(async () => {
    shared = await testApp({ env: { WEBHOOK_TIMEOUT_SECONDS: '1' } });
  });
  afterAll(async () => shared?.close());

  async function hangingEndpoint(key: string) {
    const receiver = await receiverWith(shared.clock, { hangs: true });
    const endpoint = await endpointAt(shared, key, receiver.url);
    return { receiver, endpoint };
  }
  const examOf = (key: string, endpointId: string) =>
    shared.request({ method: 'POST', url: `/webhook-endpoints/${endpointId}/exam`, headers: { 'x-api-key': key } });

  it('sends valid alone, then the other seven at once within the endpoint’s share, and answers within twice the case limit', async () => {
    const key = await shared.newKey({ plan: 'business', test: true });
    const { receiver, endpoint } = await hangingEndpoint(key);
    const started = performance.now();
    const answer = json<Exam>(await examOf(key, endpoint.id));
    // Within 2 s of its start, whatever the receiver does (a margin for the machine, not a measure of speed).
    expect(performance.now() - started).toBeLessThan(3_500);
    expect(answer.passed).toBe(false);
    expect(answer.cases.map((c) => c.id)).toEqual(IDS);
    expect(answer.cases[0]).toMatchObject({ id: 'valid', got: 'no answer within 1 s', passed: false });
    expect(answer.cases.every((c) => !c.passed)).toBe(true);
    // Valid (cut after 1 s, though the receiver still holds it), then four at once (the endpoint's share);
    // the last three found the exam over.
    expect(receiver.requests).toBe(5);
    expect(receiver.mostInFlight).toBe(5);
    expect(answer.cases.slice(1).map((c) => c.got)).toEqual(Array(7).fill("no answer within 2 s of the exam's start"));
  });

  it('five exams at once are each answered within twice the case limit', async () => {
    const key = await shared.newKey({ plan: 'business', test: true });
    const endpoints = await Promise.all(Array.from({ length: 5 }, () => hangingEndpoint(key)));
    const started = performance.now();
    const answers = await Promise.all(endpoints.map(({ endpoint }) => examOf(key, endpoint.id)));
    expect(performance.now() - started).toBeLessThan(3_500);
    expect(answers.map((a) => a.statusCode)).toEqual(Array(5).fill(200));
  });
});

describe('the report card’s webhook-receiver check', () => {
  it('is untested before an exam, failed after a failing one (naming its wrong cases and its request), passed after a later passing one', async () => {
    const wrong = await receiverWith(t.clock, { duplicateStatus: 409, acceptsStale: true });
    const right = await receiverWith(t.clock);
    const { key, hooks, exam, check } = await testKey();
    expect(await check()).toMatchObject({ status: 'untested', seen: 0 });
    const endpoint = await endpointFor(key, wrong);

    expect((await examined(() => exam(endpoint.id, 'exam-failing'))).passed).toBe(false);
    const failed = await check();
    expect(failed).toMatchObject({ status: 'failed', seen: 1 });
    expect(failed.failures[0]!.requestId).toBe('exam-failing');
    expect(failed.failures[0]!.detail).toMatch(/duplicate, stale/);

    expect((await hooks.patch(endpoint.id, { url: right.url })).statusCode).toBe(200);
    right.secrets.push(...wrong.secrets);
    expect((await examined(() => exam(endpoint.id, 'exam-passing'))).passed).toBe(true);
    expect(await check()).toMatchObject({ status: 'passed', seen: 2 });
  });
});

describe('in production', () => {
  it('applies the sender’s destination check: a stored loopback URL fails every case as refused, without a connection', async () => {
    const prod = await testApp({ env: { NODE_ENV: 'production' } });
    try {
      const receiver = await receiverWith(t.clock);
      const { record, key } = await prod.keys.create({ plan: 'business', test: true });
      // Saved while the check did not apply (outside production, or with WEBHOOK_ALLOW_PRIVATE).
      const id = 'we_000000000000000000000001';
      await prod.db
        .insertInto('webhook_endpoints')
        .values({
          id,
          api_key_id: record.id,
          url: receiver.url,
          description: '',
          events: null,
          secret: `whsec_${Buffer.alloc(32).toString('base64')}`,
          previous_secret: null,
          previous_until: null,
          livemode: 0,
          created_at: new Date(prod.clock()).toISOString(),
        })
        .execute();
      const response = await prod.request({
        method: 'POST',
        url: `/webhook-endpoints/${id}/exam`,
        headers: { 'x-api-key': key },
      });
      expect(response.statusCode).toBe(200);
      expect(json<Exam>(response)).toEqual({
        passed: false,
        cases: EXAM_CASES.map((c) => ({
          id: c.id,
          expected: c.expected,
          got: `refused: ${NOT_ALLOWED}`,
          passed: false,
          ms: expect.any(Number),
        })),
      });
      expect(receiver.requests).toBe(0);
    } finally {
      await prod.close();
    }
  });
});

describe('over a connection', () => {
  it('keeps the client’s connection open as long as its cases may take, past SEND_TIMEOUT_SECONDS', async () => {
    const slow = await testApp({ overSocket: true, env: { SEND_TIMEOUT_SECONDS: '1', WEBHOOK_TIMEOUT_SECONDS: '1' } });
    try {
      // Eight answers of 0.3 s: 2.4 s with nothing moving on the client's connection.
      const receiver = await receiverWith(slow.clock, { delayMs: 300 });
      const key = await slow.newKey({ plan: 'business', test: true });
      const endpoint = await endpointAt(slow, key, receiver.url);
      receiver.secrets.push(endpoint.secret);
      const response = await slow.request({
        method: 'POST',
        url: `/webhook-endpoints/${endpoint.id}/exam`,
        headers: { 'x-api-key': key },
      });
      expect(response.statusCode).toBe(200);
      expect(json<Exam>(response).passed).toBe(true);
    } finally {
      await slow.close();
    }
  });
});
