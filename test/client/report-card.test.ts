/**
 * The typed client earns a clean report card (docs/testing-clients.md#is-my-client-a-good-api-citizen). A soak on a
 * free test key, over HTTP against the real service with a standing fault profile, meets every situation the card
 * grades: 429s, 503s with Retry-After, the minute's last request (`X-RateLimit-Remaining: 0`), 500s and resets
 * repeated, orders placed and retried, ETags read again, listings followed by their cursors, all with one
 * access token (the key's client credentials), which expires when the test moves the key's clock; then a
 * sunset's 410s, of an operation and of a version, and an exam of a webhook receiver. Its card shows
 * every check passed, none failed. The service runs on the real time; the client's long waits pass in
 * the key's own time (`keyTime`: the key's test clock moved instead of waited, which the card counts as
 * time waited), its short ones for real. One request at a time: no in-flight allowance to lean on.
 */
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  type Fetch,
  InternalServerError,
  NetworkError,
  type Pet,
  PetstoreClient,
  type PetstoreClientOptions,
  RateLimitedError,
  type ReportCard,
  type ReportCheck,
  ServiceUnavailableError,
  SunsetError,
  VersionSunsetError,
} from '../../client/index.js';
import { seeded } from '../../src/faults/draws.js';
import type { FaultProfileInput } from '../../src/faults/profile.js';
import { OLDEST_VERSION } from '../../src/versions/versions.js';
import { listen } from '../../src/webhooks/listen.js';
import { type TestApp, testApp } from '../helpers/app.js';
import { freePort } from '../helpers/process.js';
import { keyTime, realTime } from './harness.js';

/**
 * The soak's faults, each kind as likely; seeded, so that a run replays (its requests go one at a time).
 * A 429 drawn says to wait at least the ban rule's pace (7 s), so a client that waits each is never
 * banned, however many its faults force; a reset's lost answer teaches the client nothing (no `ETag`).
 */
const SOAK: FaultProfileInput = {
  rate: 0.15,
  faults: ['503', '500', '429', 'reset'],
  latencyMs: { min: 0, max: 3 },
  seed: 2026,
};
/** Half the requests fail, with a 500 or a reset: most calls get through on a retry. */
const FLAKY: FaultProfileInput = { rate: 0.5, faults: ['500', 'reset'], latencyMs: null, seed: 5 };
/** Every request fails: each call is repeated until the client gives up. */
const FAILING: FaultProfileInput = { rate: 1, faults: ['500', 'reset'], latencyMs: null, seed: 7 };
const ROUNDS = 30;
const SUNSETS = '2027-07-01T00:00:00.000Z';

let t: TestApp;
let baseUrl: string;
beforeAll(async () => {
  t = await testApp({ clock: realTime });
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  baseUrl = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
});
afterAll(async () => t.close());

/**
 * A free test key, and a client of it on the key's time that keeps every request it sends; by its key, or by its
 * client credentials (`withToken`: its requests carry an access token).
 */
async function clientOf(more: Partial<PetstoreClientOptions> = {}, { withToken = false } = {}) {
  const { record, key } = await t.keys.create({ plan: 'free', test: true });
  const time = keyTime(baseUrl, key);
  const sent: Request[] = [];
  const keeping: Fetch = (request) => (sent.push(request), fetch(request));
  const options: PetstoreClientOptions = {
    ...(withToken ? { clientId: record.id, clientSecret: key } : { apiKey: key }),
    baseUrl,
    ...time,
    random: seeded(11),
    fetch: keeping,
    onDeprecation: () => {},
    ...more,
  };
  return { id: record.id, key, time, sent, options, client: new PetstoreClient(options) };
}

/**
 * Moves the key's clock `seconds` on as a test of expiry does: behind the client's back, so that its own clock (the
 * key's time as it last learnt it) does not know, and its token expires while it holds it.
 */
async function expireTokens(key: string, seconds: number): Promise<void> {
  const moved = await fetch(`${baseUrl}/test-clock/advance`, {
    method: 'POST',
    headers: { 'x-api-key': key, 'content-type': 'application/json' },
    body: JSON.stringify({ seconds }),
  });
  expect(moved.status).toBe(200);
  await moved.body?.cancel();
}

const pathOf = (request: Request) => new URL(request.url).pathname;

/** A call the faults may defeat (every attempt failed): the soak goes on; any other error is the test's. */
async function tolerated<T>(call: () => Promise<T>): Promise<T | undefined> {
  try {
    return await call();
  } catch (error) {
    if (
      error instanceof ServiceUnavailableError ||
      error instanceof InternalServerError ||
      error instanceof NetworkError ||
      error instanceof RateLimitedError
    )
      return undefined;
    throw error;
  }
}

/** One round of what a shop's client does: the catalogue page by page, a pet, an order and its reads, the events. */
async function round(client: PetstoreClient, pets: Pet[], n: number): Promise<void> {
  let cursor: string | undefined;
  do {
    const page = await tolerated(() => client.listPets({ limit: 5, cursor }));
    cursor = page?.nextCursor ?? undefined;
  } while (cursor !== undefined);
  const pet = pets[n % pets.length]!;
  await tolerated(() => client.getPet(pet.id));
  const order = await tolerated(() => client.placeOrder({ petId: pet.id, quantity: 1 }));
  if (order) {
    await tolerated(() => client.getOrder(order.id));
    await tolerated(() => client.getOrder(order.id));
  }
  await tolerated(() => client.listOrders({ limit: 5 }));
  await tolerated(async () => {
    let pages = 0;
    for await (const page of client.events({ limit: 5 })) if (++pages === 2 || page.data.length === 0) break;
  });
}

/** What a check says, for an assertion's message. */
const summary = (check: ReportCheck) => ({
  id: check.id,
  status: check.status,
  seen: check.seen,
  failures: check.failures.map((f) => `${f.detail} (${f.requestId})`),
});
/** The checks of `card` that are not `passed` with their situation seen. */
const notPassed = (card: ReportCard) =>
  card.checks.filter((check) => check.status !== 'passed' || check.seen === 0).map(summary);

describe('the typed client’s report card', () => {
  let receiver: Server | undefined;
  afterEach(async () => {
    await new Promise((resolve) => (receiver ? receiver.close(resolve) : resolve(undefined)));
    receiver = undefined;
  });

  it(
    'a soak with faults on a free test key, sunsets, a webhook exam and a dropped stream: every check passed, none failed',
    { timeout: 120_000 },
    async () => {
      const { id, key, time, sent, options, client } = await clientOf({}, { withToken: true });
      const pets = (await client.listPets({ status: 'available' })).data;

      await t.keys.setFaults(id, SOAK);
      for (let n = 0; n < ROUNDS; n++) await round(client, pets, n);

      // Resets and 500s: orders placed through them with their one Idempotency-Key, events read through them.
      await t.keys.setFaults(id, FLAKY);
      for (let n = 0; n < 10; n++) {
        await tolerated(() => client.placeOrder({ petId: pets[n % pets.length]!.id, quantity: 2 }));
        await tolerated(() => client.listEvents({ limit: 3 }));
      }
      // Nothing but failures: each call repeated until the client gives up, backing off.
      await t.keys.setFaults(id, FAILING);
      await expect(client.listEvents({ limit: 2 })).rejects.toThrow();
      await expect(client.placeOrder({ petId: pets[0]!.id, quantity: 3 })).rejects.toThrow();
      await t.keys.setFaults(id, null);

      // An hour on, behind the client's back: the token it holds is refused as expired; renewed once, the call is
      // answered. (Just before the sunsets: past them, the client's clock learns the key's time again.)
      const expiring = sent.length;
      await expireTokens(key, 3600);
      expect((await client.listOrders({ limit: 1 })).data).toHaveLength(1);
      const renewal = sent.slice(expiring).filter((request) => pathOf(request) !== '/usage');
      expect(renewal.map((request) => `${request.method} ${pathOf(request)}`)).toEqual([
        'GET /store/orders',
        'POST /oauth/token',
        'GET /store/orders',
      ]);
      const [refused, , renewed] = renewal.map((request) => request.headers.get('authorization'));
      expect(renewed).not.toBe(refused);

      // Past the sunsets in the key's time: getPet is gone, and so is the oldest version. Neither is asked for again.
      await time.advanceTo(SUNSETS);
      const before = sent.length;
      await expect(client.getPet(pets[0]!.id)).rejects.toBeInstanceOf(SunsetError);
      for (let i = 0; i < 3; i++) await expect(client.getPet(pets[1]!.id)).rejects.toBeInstanceOf(SunsetError);
      expect((await client.listOrders({ limit: 1 })).data).toHaveLength(1);
      // By the key: a client of its own with the client credentials would ask for a second token while one is held.
      const older = new PetstoreClient({
        ...options,
        clientId: undefined,
        clientSecret: undefined,
        apiKey: key,
        version: OLDEST_VERSION,
      });
      await expect(older.listOrders()).rejects.toBeInstanceOf(VersionSunsetError);
      for (const call of [() => older.listPets(), () => older.listOrders(), () => older.getOrder(1)])
        await expect(call()).rejects.toBeInstanceOf(VersionSunsetError);
      // The token renewed once (months on, it has expired), getPet once, listOrders once in each version.
      expect(sent.slice(before).map((request) => `${request.method} ${pathOf(request)}`)).toEqual([
        'POST /oauth/token',
        `GET /pets/${pets[0]!.id}`,
        'GET /store/orders',
        'GET /store/orders',
      ]);

      // A receiver that verifies as Standard Webhooks says: the service's own `petstore webhooks listen`.
      const port = await freePort();
      const endpoint = await client.createWebhookEndpoint({ url: `http://127.0.0.1:${port}/` });
      receiver = await listen({
        host: '127.0.0.1',
        port,
        secrets: [endpoint.secret],
        fail: 0,
        out: () => {},
        clock: Date.now,
      });
      expect((await client.examWebhookEndpoint(endpoint.id)).passed).toBe(true);

      // Its events as a stream, which the service drops after the first: resumed after its retry, from the last id.
      const steps = [
        { match: 'GET /events/stream', answer: 'drop' },
        { match: 'GET /events/stream', answer: 'pass' },
      ];
      const armed = await fetch(`${baseUrl}/test-scenario`, {
        method: 'PUT',
        headers: { 'x-api-key': key, 'content-type': 'application/json' },
        body: JSON.stringify({ steps }),
      });
      expect(armed.status).toBe(200);
      await armed.body?.cancel();
      const [newest] = (await client.listEvents({ limit: 1 })).data;
      const placed = [await client.placeOrder({ petId: pets[0]!.id, quantity: 1 })];
      placed.push(await client.placeOrder({ petId: pets[1]!.id, quantity: 1 }));
      const streamed: number[] = [];
      for await (const event of client.events.stream({ types: ['order.placed'], after: newest!.id }))
        if (streamed.push((event.data as { id: number }).id) === 2) break;
      expect(streamed).toEqual(placed.map((order) => order.id));

      const card = await client.reportCard();
      expect(card.checks.filter((check) => check.status === 'failed').map(summary)).toEqual([]);
      expect(notPassed(card)).toEqual([]);
      expect(card.requests).toBeGreaterThan(ROUNDS * 10);
    },
  );

  it('paces without a 429 to teach it: past the minute’s last request, the next waits for the slot', async () => {
    const statuses: number[] = [];
    const { client } = await clientOf({ onResponse: (event) => statuses.push(event.status) });
    for (let n = 0; n < 65; n++) await client.listEvents({ limit: 1 });
    expect(statuses).toEqual(Array(65).fill(200));
    const card = await client.reportCard();
    expect(card.checks.find((check) => check.id === 'paces')).toMatchObject({ status: 'passed', failed: 0 });
    expect(card.checks.find((check) => check.id === 'paces')!.seen).toBeGreaterThan(0);
  });

  it('a reset answer is taken to have counted: spending the last request so, the next waits for the slot, or first asks /usage', async () => {
    const { id, client, sent } = await clientOf({ maxAttempts: 2 });
    for (let n = 0; n < 59; n++) await client.listEvents({ limit: 1 });
    expect(client.rateLimit?.remaining).toBe(1);
    // The last request of the minute counted, its answer lost; then, after the wait, the first one again.
    await t.keys.setFaults(id, { rate: 1, faults: ['reset'], latencyMs: null });
    await expect(client.listEvents({ limit: 1 })).rejects.toBeInstanceOf(NetworkError);
    await t.keys.setFaults(id, null);
    await client.listEvents({ limit: 1 });
    expect(sent.filter((request) => new URL(request.url).pathname === '/usage')).toHaveLength(1);
    const card = await client.reportCard();
    expect(card.checks.filter((check) => check.status === 'failed').map(summary)).toEqual([]);
  });
});
