/**
 * A test key's script (scenarios/, docs/testing-clients.md#scenarios-a-test-can-count-on): armed, met by an
 * unmodified client's requests in order, each answer the `Prefer` fault's own, and refused whole when bad.
 * Over real sockets, so that a `reset` is a reset connection.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { FaultProfile } from '../../src/faults/profile.js';
import { NEWEST_VERSION } from '../../src/versions/versions.js';
import { type TestApp, testApp } from '../helpers/app.js';
import type { Received } from '../helpers/over-socket.js';

let t: TestApp;
afterEach(async () => t?.close());

const PET = 'GET /pets/{petId}';
const ORDER = 'POST /store/orders';

async function testKey(faults?: Omit<FaultProfile, 'setAt'>): Promise<string> {
  return (await t.keys.create({ plan: 'free', test: true, faults })).key;
}
const as = (key: string, more: Record<string, string> = {}) => ({
  'x-api-key': key,
  'petstore-version': NEWEST_VERSION,
  ...more,
});
const arm = (key: string, payload: object) =>
  t.request({ method: 'PUT', url: '/test-scenario', headers: as(key), payload });
const script = async (key: string) =>
  (await t.request({ url: '/test-scenario', headers: as(key) })).json() as {
    scenario: string | null;
    steps: object[];
    next: number;
    used: { step: number; requestId: string; at: string }[];
    done: boolean;
  };
const pet = (key: string, more: Record<string, string> = {}, id = 1) =>
  t.request({ url: `/pets/${id}`, headers: as(key, more) });
const order = (key: string, more: Record<string, string> = {}) =>
  t.request({ method: 'POST', url: '/store/orders', headers: as(key, more), payload: { petId: 1, quantity: 1 } });

/**
 * The headers of an answer that are not expected to differ between two keys' identical requests with as many
 * requests counted: all but those that differ by nature (what the client asked for, the request's id, the date)
 * and the body's length (its detail names what injected the fault; the bodies are compared apart).
 */
function comparable({ headers }: Received): Record<string, unknown> {
  const differByNature = ['preference-applied', 'x-request-id', 'date', 'content-length'];
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !differByNature.includes(name)));
}

describe('a test key script', () => {
  it('is armed, read and disarmed; its steps are met in order, each as many times as it says', async () => {
    t = await testApp({ overSocket: true });
    const key = await testKey();
    const armed = await arm(key, {
      steps: [{ match: PET, answer: '503' }, { match: PET, answer: '500', times: 2 }, { answer: 'pass' }],
    });
    expect(armed.statusCode).toBe(200);
    expect(armed.json()).toMatchObject({ scenario: null, next: 0, used: [], done: false });
    // Not matching the step in turn: answered normally, nothing used.
    expect((await t.request({ url: '/pets', headers: as(key) })).statusCode).toBe(200);
    expect((await script(key)).next).toBe(0);
    const statuses = [];
    for (let i = 0; i < 5; i++) statuses.push((await pet(key, { 'x-request-id': `req-${i}` })).statusCode);
    expect(statuses).toEqual([503, 500, 500, 200, 200]);
    const after = await script(key);
    expect(after).toMatchObject({ next: 3, done: true });
    expect(after.used.map((use) => [use.step, use.requestId])).toEqual([
      [0, 'req-0'],
      [1, 'req-1'],
      [1, 'req-2'],
      [2, 'req-3'],
    ]);
    expect(after.used[0]!.at).toBe(new Date(t.clock()).toISOString());
    // Disarmed: none, done.
    const disarmed = await t.request({ method: 'DELETE', url: '/test-scenario', headers: as(key) });
    expect(disarmed.json()).toEqual({ scenario: null, steps: [], next: 0, used: [], done: true });
  });

  it('answers each step as the Prefer fault of the same name would, header by header', async () => {
    t = await testApp({ overSocket: true });
    for (const answer of ['503', '500', '429'] as const) {
      const [asked, scripted] = [await testKey(), await testKey()];
      await arm(scripted, { steps: [{ match: PET, answer }] });
      // A step's 429 meets a request that was counted, Prefer's one that was not: one more request, and the
      // counts in their rate-limit headers are the same too.
      if (answer === '429') await t.request({ url: '/pets', headers: as(asked) });
      const viaPrefer = await pet(asked, { prefer: `fault=${answer}` });
      const viaStep = await pet(scripted);
      expect(viaStep.statusCode, answer).toBe(Number(answer));
      expect(viaPrefer.headers['preference-applied']).toBe(`fault=${answer}`);
      expect(viaStep.headers['preference-applied']).toBeUndefined();
      expect(comparable(viaStep), answer).toEqual(comparable(viaPrefer));
      const [a, b] = [viaPrefer.json() as Record<string, unknown>, viaStep.json() as Record<string, unknown>];
      expect({ ...b, detail: undefined }).toEqual({ ...a, detail: undefined });
      expect(b.detail).toMatch(/^Injected for this test key \(step 0 of its script\)/);
    }
    // pass: the normal answer.
    const [plain, scripted] = [await testKey(), await testKey()];
    await arm(scripted, { steps: [{ match: PET, answer: 'pass' }] });
    const [normal, passed] = [await pet(plain), await pet(scripted)];
    expect(comparable(passed)).toEqual(comparable(normal));
    expect(passed.body).toBe(normal.body);
  });

  it('a reset is handled in full, then its connection reset: the retry with the same Idempotency-Key gets the one order', async () => {
    t = await testApp({ overSocket: true });
    const key = await testKey();
    await arm(key, { steps: [{ match: ORDER, answer: 'reset' }] });
    const retry = { 'idempotency-key': 'one-order' };
    await expect(order(key, retry)).rejects.toMatchObject({ code: 'ECONNRESET' });
    const again = await order(key, retry);
    expect(again.statusCode).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    const orders = (await t.request({ url: '/store/orders', headers: as(key) })).json() as { data: unknown[] };
    expect(orders.data).toHaveLength(1);
    expect(await script(key)).toMatchObject({ next: 1, done: true });
  });

  it('applies after the limiter: a request the limiter or a ban refuses uses no step, a step 429 counts toward a ban', async () => {
    t = await testApp({ overSocket: true });
    const key = (await t.keys.create({ plan: 'free', test: true })).key;
    for (let i = 0; i < 60; i++) await t.request({ url: '/pets', headers: as(key) });
    await arm(key, { steps: [{ match: PET, answer: '500' }] });
    const refused = await pet(key);
    expect(refused.statusCode).toBe(429);
    expect((refused.json() as { code: string }).code).toBe('rate-limited');
    expect((await script(key)).next).toBe(0);
    t.clock.advance(60_000);
    expect((await pet(key)).statusCode).toBe(500);
    expect((await script(key)).next).toBe(1);
    // A step's 429 is refused as Prefer's is: ten sent before the previous one's wait passed ban the key (the
    // first waited for nothing), and the ban uses no step.
    const other = await testKey();
    await arm(other, { steps: [{ answer: '429', times: 20 }] });
    const answers = [];
    for (let i = 0; i < 13; i++) answers.push(((await pet(other)).json() as { code: string }).code);
    expect(answers.slice(0, 11)).toEqual(Array(11).fill('rate-limited'));
    expect(answers.slice(11)).toEqual(['key-banned', 'key-banned']);
    expect((await script(other)).used).toHaveLength(11);
    const asked = await testKey();
    const viaPrefer = [];
    for (let i = 0; i < 13; i++)
      viaPrefer.push(((await pet(asked, { prefer: 'fault=429' })).json() as { code: string }).code);
    expect(viaPrefer).toEqual(answers);
  });

  it('a request that asks for a fault meets it and uses no step; the standing profile applies only where no step met', async () => {
    t = await testApp({ overSocket: true });
    const key = await testKey();
    await arm(key, { steps: [{ match: PET, answer: '500' }] });
    const asked = await pet(key, { prefer: 'fault=503' });
    expect(asked.statusCode).toBe(503);
    expect((await script(key)).next).toBe(0);
    expect((await pet(key, { prefer: 'latency=1' })).statusCode).toBe(500);
    expect((await script(key)).next).toBe(1);

    const failing = await testKey({ rate: 1, faults: ['503'], latencyMs: null, seed: 3 });
    await arm(failing, { steps: [{ match: PET, answer: 'pass' }] });
    expect((await pet(failing)).statusCode).toBe(200);
    expect((await t.request({ url: '/pets', headers: as(failing) })).statusCode).toBe(503);
    expect((await pet(failing)).statusCode).toBe(503);
  });

  it('a conditional read meets a fault step instead of its 304, and a pass step leaves the 304 counting nothing', async () => {
    t = await testApp({ overSocket: true });
    const key = await testKey();
    const etag = (await pet(key)).headers.etag as string;
    const used = async () =>
      ((await t.request({ url: '/usage', headers: as(key) })).json() as { windows: { minute: { used: number } } })
        .windows.minute.used;
    expect(await used()).toBe(1);
    await arm(key, {
      steps: [
        { match: PET, answer: '503' },
        { match: PET, answer: 'pass' },
      ],
    });
    expect((await pet(key, { 'if-none-match': etag })).statusCode).toBe(503);
    expect(await used()).toBe(2);
    expect((await pet(key, { 'if-none-match': etag })).statusCode).toBe(304);
    expect(await used()).toBe(2);
    expect(await script(key)).toMatchObject({ next: 2, done: true });
  });

  it('a step waits latencyMs before its answer', async () => {
    t = await testApp({ overSocket: true });
    const key = await testKey();
    await arm(key, { steps: [{ match: PET, answer: 'pass', latencyMs: 150 }] });
    const started = performance.now();
    expect((await pet(key)).statusCode).toBe(200);
    expect(performance.now() - started).toBeGreaterThanOrEqual(140);
  });

  it('a new script replaces the one before, and DELETE /test-data disarms it', async () => {
    t = await testApp({ overSocket: true });
    const key = await testKey();
    await arm(key, { steps: [{ match: PET, answer: '500' }] });
    await arm(key, { scenario: 'retry-after-503' });
    expect((await pet(key)).statusCode).toBe(503);
    expect(await script(key)).toMatchObject({ scenario: 'retry-after-503', next: 1 });
    expect((await t.request({ method: 'DELETE', url: '/test-data', headers: as(key) })).statusCode).toBe(200);
    expect(await script(key)).toEqual({ scenario: null, steps: [], next: 0, used: [], done: true });
    expect((await pet(key)).statusCode).toBe(200);
  });

  it('is for test keys: a live key gets 403 test-key-required and arms nothing', async () => {
    t = await testApp({ overSocket: true });
    const live = await t.newKey('free');
    for (const sent of [
      { method: 'PUT', url: '/test-scenario', payload: { steps: [{ answer: '503' }] } },
      { url: '/test-scenario' },
      { method: 'DELETE', url: '/test-scenario' },
    ]) {
      const answer = await t.request({ ...sent, headers: as(live) });
      expect(answer.statusCode).toBe(403);
      expect((answer.json() as { code: string }).code).toBe('test-key-required');
    }
    expect((await pet(live)).statusCode).toBe(200);
  });

  it('refuses bad input with a 400 naming the member at fault, and changes nothing', async () => {
    t = await testApp({ overSocket: true });
    const key = await testKey();
    await arm(key, { steps: [{ match: PET, answer: '500' }] });
    const before = await script(key);
    const step = (more: object) => ({ steps: [{ match: PET, answer: '503', ...more }] });
    const cases: [object, string][] = [
      [{ steps: [{ answer: '418' }] }, '/steps/0/answer'],
      [step({ times: 0 }), '/steps/0/times'],
      [step({ times: 1001 }), '/steps/0/times'],
      [step({ latencyMs: 10_001 }), '/steps/0/latencyMs'],
      [{ steps: Array.from({ length: 101 }, () => ({ answer: 'pass' })) }, '/steps'],
      [{ steps: [] }, '/steps'],
      [{ steps: [{ answer: 'pass' }, { match: 'GET /nowhere', answer: 'pass' }] }, '/steps/1/match'],
      [{ steps: [{ match: 'get /pets', answer: 'pass' }] }, '/steps/0/match'],
      [{ steps: [{ match: 'GET /test-clock', answer: 'pass' }] }, '/steps/0/match'],
      [{ steps: [{ match: 'GET /pets/:petId', answer: 'pass' }] }, '/steps/0/match'],
      [{ steps: [{ match: PET, answer: 'drop' }] }, '/steps/0/match'],
      [{ ...step({}), scenario: 'retry-after-503' }, '/scenario'],
      [{ scenario: 'no-such-scenario' }, '/scenario'],
      [{}, '/steps'],
      [{ steps: [{ answer: 'pass', extra: 1 }] }, '/steps/0/extra'],
    ];
    for (const [payload, member] of cases) {
      const answer = await arm(key, payload);
      expect(answer.statusCode, JSON.stringify(payload).slice(0, 80)).toBe(400);
      const problem = answer.json() as { code: string; errors: { in: string; name: string }[] };
      expect(problem.code).toBe('invalid-request');
      expect(
        problem.errors.map((error) => error.name),
        JSON.stringify(payload).slice(0, 80),
      ).toContain(member);
    }
    for (const raw of ['{', 'null', '[]', '"steps"'])
      expect(
        (
          await t.request({
            method: 'PUT',
            url: '/test-scenario',
            headers: as(key, { 'content-type': 'application/json' }),
            payload: raw,
          })
        ).statusCode,
      ).toBe(400);
    expect(await script(key)).toEqual(before);
    expect((await pet(key)).statusCode).toBe(500);
  });
});
