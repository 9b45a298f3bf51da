/** When the client sends again, and how long it waits first. */
import { afterEach, describe, expect, it } from 'vitest';
import { type Fetch, NetworkError, PetstoreClient, ServiceUnavailableError } from '../../client/index.js';
import { Transport } from '../../client/transport.js';
import { type TestApp, testApp } from '../helpers/app.js';
import { fakeClock } from '../helpers/clock.js';
import { BASE_URL, clientOptions, injectFetch, sharedClock } from './harness.js';

const KEY = 'pet_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA';

function unavailable(retryAfter?: number): Response {
  const body = {
    type: `${BASE_URL}/problems/service-unavailable`,
    title: 'Service unavailable',
    status: 503,
    detail: 'down',
    instance: '/pets',
  };
  const headers: Record<string, string> = {
    'content-type': 'application/problem+json',
    ...(retryAfter ? { 'retry-after': String(retryAfter) } : {}),
  };
  return new Response(JSON.stringify(body), { status: 503, headers });
}
const ok = () =>
  new Response(JSON.stringify({ data: [], nextCursor: null }), {
    status: 200,
    headers: { 'content-type': 'application/json' },
  });

/** A fetch that answers from a script of answers (or throws them), recording each request. */
function scripted(answers: (() => Response | Error)[]) {
  const requests: Request[] = [];
  const fetch: Fetch = async (request) => {
    requests.push(request);
    const answer = (answers[requests.length - 1] ?? answers.at(-1)!)();
    if (answer instanceof Error) throw answer;
    return answer;
  };
  return { fetch, requests };
}

/** The client's sleeps, on a fake clock. */
function recordedSleeps() {
  const clock = fakeClock();
  const sleeps: number[] = [];
  const { now, sleep } = sharedClock(clock);
  return {
    sleeps,
    now,
    sleep: (ms: number) => {
      sleeps.push(ms);
      return sleep!(ms);
    },
  };
}

describe('503 and network errors: exponential backoff with full jitter and a cap, bounded attempts', () => {
  const draws = [0.5, 1, 0.25, 1, 1, 1];
  const options = () => {
    let i = 0;
    return {
      ...recordedSleeps(),
      random: () => draws[i++] ?? 1,
      backoffBaseMs: 1000,
      backoffCapMs: 3000,
      onDeprecation: () => {},
    };
  };

  it('waits random() × min(cap, base × 2^(attempt-1)) between attempts, then succeeds', async () => {
    const o = options();
    const { fetch, requests } = scripted([
      unavailable,
      () => new TypeError('fetch failed'),
      unavailable,
      unavailable,
      ok,
    ]);
    const client = new PetstoreClient({ apiKey: KEY, baseUrl: BASE_URL, fetch, ...o });
    await expect(client.listPets()).resolves.toEqual({ data: [], nextCursor: null });
    expect(requests).toHaveLength(5);
    expect(o.sleeps).toEqual([0.5 * 1000, 1 * 2000, 0.25 * 3000, 1 * 3000]);
  });

  it('gives up after maxAttempts with the last error', async () => {
    const o = options();
    const { fetch, requests } = scripted([unavailable]);
    const client = new PetstoreClient({ apiKey: KEY, baseUrl: BASE_URL, fetch, ...o, maxAttempts: 3 });
    await expect(client.listPets()).rejects.toBeInstanceOf(ServiceUnavailableError);
    expect(requests).toHaveLength(3);
    const down = scripted([() => new TypeError('fetch failed')]);
    const offline = new PetstoreClient({ apiKey: KEY, baseUrl: BASE_URL, ...o, fetch: down.fetch, maxAttempts: 2 });
    await expect(offline.listPets()).rejects.toBeInstanceOf(NetworkError);
    expect(down.requests).toHaveLength(2);
  });

  it('retries a 500 as a 503, backing off: the service remembers only successes under an Idempotency-Key', async () => {
    const o = options();
    const failed = () =>
      new Response(JSON.stringify({ type: `${BASE_URL}/problems/internal-error`, status: 500 }), {
        status: 500,
        headers: { 'content-type': 'application/problem+json' },
      });
    const { fetch, requests } = scripted([failed, failed, ok]);
    const transport = new Transport(BASE_URL, KEY, { fetch, ...o });
    await transport.send({
      operation: 'placeOrder',
      method: 'POST',
      path: '/store/orders',
      body: { petId: 1 },
      headers: { 'idempotency-key': 'k' },
    });
    expect(requests.map((request) => request.headers.get('idempotency-key'))).toEqual(['k', 'k', 'k']);
    expect(o.sleeps).toEqual([0.5 * 1000, 1 * 2000]);
  });

  it("never waits less than a 503's Retry-After", async () => {
    const o = options();
    const { fetch } = scripted([() => unavailable(7), ok]);
    await new PetstoreClient({ apiKey: KEY, baseUrl: BASE_URL, fetch, ...o }).listPets();
    expect(o.sleeps).toEqual([7000]);
  });

  it('retries a 409 idempotency-key-in-progress with backoff: the original is still being placed', async () => {
    const o = options();
    const inProgress = () => {
      const body = {
        type: `${BASE_URL}/problems/idempotency-key-in-progress`,
        title: 'In progress',
        status: 409,
        detail: 'wait',
        instance: '/store/orders',
      };
      return new Response(JSON.stringify(body), {
        status: 409,
        headers: { 'content-type': 'application/problem+json' },
      });
    };
    const placed = () =>
      new Response(JSON.stringify({ id: 1 }), { status: 201, headers: { 'content-type': 'application/json' } });
    const { fetch, requests } = scripted([inProgress, placed]);
    const transport = new Transport(BASE_URL, KEY, { fetch, ...o });
    await expect(
      transport.send({
        operation: 'placeOrder',
        method: 'POST',
        path: '/store/orders',
        body: { petId: 1 },
        headers: { 'idempotency-key': 'k' },
      }),
    ).resolves.toEqual({ id: 1 });
    expect(requests).toHaveLength(2);
    expect(o.sleeps).toEqual([0.5 * 1000]);
  });

  it('never retries a POST without an Idempotency-Key', async () => {
    for (const failure of [unavailable, () => new TypeError('fetch failed')]) {
      const { fetch, requests } = scripted([failure, ok]);
      const transport = new Transport(BASE_URL, KEY, { fetch, ...options() });
      await expect(
        transport.send({ operation: 'post', method: 'POST', path: '/store/orders', body: { petId: 1 } }),
      ).rejects.toThrow();
      expect(requests).toHaveLength(1);
    }
  });
});

describe('against the server', () => {
  let t: TestApp;
  afterEach(async () => t.close());

  it('429: waits Retry-After plus jitter, then is admitted', async () => {
    t = await testApp();
    const key = await t.newKey('free');
    for (let i = 0; i < 60; i++) await t.app.inject({ url: '/pets', headers: { 'x-api-key': key } });
    t.clock.advance(12_345);
    const statuses: number[] = [];
    const client = new PetstoreClient({
      ...clientOptions(t.app, t.clock, key),
      random: () => 0.5,
      onResponse: (e) => statuses.push(e.status),
    });
    const start = t.clock();
    await client.listPets();
    expect(statuses).toEqual([429, 200]);
    expect(t.clock() - start).toBe(48_000 + 500);
  });

  it('placeOrder sets its own Idempotency-Key, so a retry after a lost answer places one order', async () => {
    t = await testApp();
    const key = await t.newKey('pro');
    const server = injectFetch(t.app);
    const keys: (string | null)[] = [];
    let lost = false;
    // The server places the order, then the answer is lost on the way back.
    const fetch: Fetch = async (request) => {
      keys.push(request.headers.get('idempotency-key'));
      const answer = await server(request);
      if (request.method === 'POST' && !lost) {
        lost = true;
        throw new TypeError('fetch failed');
      }
      return answer;
    };
    const client = new PetstoreClient({ ...clientOptions(t.app, t.clock, key), fetch });
    const [pet] = (await client.listPets({ status: 'available', limit: 1 })).data;
    const order = await client.placeOrder({ petId: pet!.id, quantity: 2 });
    expect(order).toMatchObject({ petId: pet!.id, quantity: 2, status: 'placed' });
    const [, first, second] = keys;
    expect(first).toMatch(/^[0-9a-f-]{36}$/);
    expect(second).toBe(first);
    expect((await client.listOrders()).data).toEqual([order]);
  });
});
