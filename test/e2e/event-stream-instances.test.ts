import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { RETRY_MS } from '../../src/event-stream/stream.js';
import { TIMER_SLACK_MS } from '../../src/report-card/checks.js';
import { postgresAvailable } from '../helpers/database.js';
import { type Connection, type Follower, follow, until, waits } from '../helpers/event-source.js';
import type { Server } from '../helpers/process.js';
import { redisForTests } from '../helpers/redis.js';
import { type ScaledOut, scaledOut } from '../helpers/scaled-out.js';

/**
 * `GET /events/stream` across two instances on PostgreSQL + Redis (docs/orders-and-events.md#the-event-stream), as
 * a WHATWG client meets it: the `eventsource` package, its every (re)connection sent to the other instance, the
 * service dropping its stream every 100 events and one instance stopped under it. It receives each event of its key
 * once, in the key's order, waiting the stream's `retry` before each resume; the key's report card agrees.
 */

const redis = await redisForTests();
const available = (await postgresAvailable()) && redis !== null;

/** A test key with room for every write of a test (and its stream's openings) within a minute. */
const TEST_KEY = { plan: 'enterprise', perMinute: 100_000, perDay: 1_000_000, test: true } as const;
/** Placed, approved, delivered: the events each order makes. */
const EVENTS_PER_ORDER = 3;
/** Orders written at once (each its three moves one after another). */
const PARALLEL = 8;
/** What `SIGTERM` gives the service to stop (SHUTDOWN_TIMEOUT_SECONDS, left at its default). */
const GRACE_MS = loadConfig({}).shutdownTimeoutMs;

async function call(server: Server, key: string, method: string, path: string, payload?: unknown) {
  const answer = await fetch(`${server.url}${path}`, {
    method,
    headers: { 'x-api-key': key, ...(payload === undefined ? {} : { 'content-type': 'application/json' }) },
    body: payload === undefined ? undefined : JSON.stringify(payload),
  });
  const text = await answer.text();
  if (answer.status >= 300) throw new Error(`${method} ${path} through ${server.url}: ${answer.status} ${text}`);
  return JSON.parse(text) as unknown;
}

async function availablePet(server: Server, key: string): Promise<number> {
  const page = (await call(server, key, 'GET', '/pets?status=available&limit=1')) as { data: { id: number }[] };
  return page.data[0]!.id;
}

/**
 * Places `orders` orders of `key` and moves each to delivered (three events an order), `PARALLEL` orders at a
 * time, each request through the next instance of `via` in turn.
 */
async function placeAndDeliver(key: string, petId: number, orders: number, via: Server[]): Promise<void> {
  let placed = 0;
  let turn = 0;
  const next = () => via[turn++ % via.length]!;
  const worker = async () => {
    while (placed < orders) {
      placed++;
      const order = (await call(next(), key, 'POST', '/store/orders', { petId, quantity: 1 })) as { id: number };
      for (let step = 1; step < EVENTS_PER_ORDER; step++)
        await call(next(), key, 'POST', `/store/orders/${order.id}/advance`);
    }
  };
  await Promise.all(Array.from({ length: PARALLEL }, worker));
}

/** Every event id of the key, oldest first: `GET /events` read newest first, page by page, and reversed. */
async function listedIds(server: Server, key: string): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | null = null;
  do {
    const query: string = cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`;
    const page = (await call(server, key, 'GET', `/events?limit=100${query}`)) as {
      data: { id: string }[];
      nextCursor: string | null;
    };
    ids.push(...page.data.map((event) => event.id));
    cursor = page.nextCursor;
  } while (cursor !== null);
  return ids.reverse();
}

/** Each event as `GET /events` lists it, once, in that order; each frame's id, type and data agreeing. */
function expectEveryEventOnce(client: Follower, listed: string[]): void {
  const ids = client.received.map((event) => event.id);
  expect(new Set(ids).size, 'no event twice').toBe(ids.length);
  expect(ids).toEqual(listed);
  for (const event of client.received) {
    expect(event.dataId).toBe(event.id);
    expect(event.dataType).toBe(event.event);
  }
}

/** After the last event arrived, a moment for any repeat to follow: the client on a stream, a poll or more later. */
async function settled(client: Follower): Promise<void> {
  await until(
    'the client on a stream again',
    () => client.open,
    RETRY_MS * 2,
    () => client.describe(),
  );
  await sleep(500);
}

describe.skipIf(!available)('the event stream, scaled out, with an eventsource client', () => {
  const pairs: ScaledOut[] = [];
  const clients: Follower[] = [];
  /** Two instances, a test key of theirs and a pet it can order. */
  const keyed = async () => {
    const two = await scaledOut(redis!.url);
    pairs.push(two);
    const { key } = await two.newKey(TEST_KEY);
    return { a: two.a, b: two.b, key, pet: await availablePet(two.a, key) };
  };
  afterAll(async () => {
    for (const client of clients) client.close();
    await Promise.all(pairs.map((two) => two.stop()));
  });

  it(
    'every event exactly once, in order, across two instances with drops and one stopped',
    { timeout: 90_000 },
    async () => {
      const ORDERS = 334;
      const DROP_EVERY = 100;
      const total = ORDERS * EVENTS_PER_ORDER;
      const half = Math.ceil(ORDERS / 2);
      const { a, b, key, pet } = await keyed();
      // A first, then B, then A…; once one is stopped, the other.
      const down = new Set<Server>();
      const route = (n: number) => {
        const up = [a, b].filter((server) => !down.has(server));
        return up[n % up.length]!;
      };
      const client = follow(key, { route, prefer: `fault=drop; events=${DROP_EVERY}` });
      clients.push(client);
      await until('the first stream opens', () => client.open, 10_000, client.describe);

      await placeAndDeliver(key, pet, half, [a, b]);
      // Midway: once the client has every event so far and is on a stream that is not about to drop, the instance
      // it is connected to stops, and the writes go on through the other.
      await until(
        'the client caught up, on an open stream',
        () =>
          client.received.length === half * EVENTS_PER_ORDER && client.open && client.current()!.events < DROP_EVERY,
        60_000,
        client.describe,
      );
      const onVictim = client.current()!;
      const victim = onVictim.server;
      const survivor = victim === a ? b : a;
      down.add(victim);
      const stoppedAt = performance.now();
      const stopped = victim.stop('SIGTERM').then((code) => ({ code, ms: performance.now() - stoppedAt }));
      await placeAndDeliver(key, pet, ORDERS - half, [survivor]);
      const exit = await stopped;
      expect(exit.code, victim.output()).toBe(0);
      expect(exit.ms).toBeLessThan(GRACE_MS);

      await until('every event received', () => client.received.length >= total, 60_000, client.describe);
      await settled(client);
      client.close();
      const listed = await listedIds(survivor, key);
      expect(listed).toHaveLength(total);
      expectEveryEventOnce(client, listed);

      const { connections } = client;
      expect(
        connections.map((c) => c.status),
        client.describe(),
      ).toEqual(connections.map(() => 200));
      // The service ended a stream every 100 events: at least 1,000 / 100 reconnections.
      expect(connections.length - 1).toBeGreaterThanOrEqual(1_000 / DROP_EVERY);
      // None sooner than `retry` after the end before it (a Node timer may fire a few ms early, as the card allows).
      const waited = waits(connections);
      expect(Math.min(...waited), `waits: ${waited.join(', ')} ms`).toBeGreaterThanOrEqual(RETRY_MS - TIMER_SLACK_MS);
      // Each resumed after the last event received, on the other instance until one was stopped.
      for (const [i, connection] of connections.entries()) {
        expect(connection.lastEventId, `connection ${i}`).toBe(connection.lastReceived);
        if (i > 0) expect(connection.lastEventId, `connection ${i}`).not.toBeNull();
      }
      const beforeStop = connections.slice(0, connections.indexOf(onVictim) + 1);
      expect(beforeStop.length).toBeGreaterThanOrEqual(2);
      const to = (connection: Connection) => connection.server.url;
      beforeStop.slice(1).forEach((connection, i) => expect(to(connection)).not.toBe(to(beforeStop[i]!)));
      for (const connection of connections.slice(beforeStop.length)) expect(to(connection)).toBe(survivor.url);
      // Every stream the service ended, it ended cleanly: a drop after exactly 100 events, the stopped instance's by
      // its stop (or a drop, had it reached its 100th first). The last, open, was closed by the test.
      const ended = connections.slice(0, -1);
      expect(connections.at(-1)!.ending).toBe('closed');
      expect(ended.map((connection) => connection.ending)).toEqual(ended.map(() => 'clean'));
      for (const connection of ended)
        if (connection !== onVictim) expect(connection.events, client.describe()).toBe(DROP_EVERY);
      expect(onVictim.events).toBeLessThanOrEqual(DROP_EVERY);
      expect(onVictim.endedAt).toBeGreaterThan(stoppedAt);
    },
  );

  it('a graceful stop ends the stream cleanly, and the client resumes on the other instance missing nothing', async () => {
    const ORDERS = 10;
    const { a, b, key, pet } = await keyed();
    // A first; every reconnection to B.
    const client = follow(key, { route: (n) => (n === 0 ? a : b) });
    clients.push(client);
    await until('the stream opens on A', () => client.open, 10_000, client.describe);
    await placeAndDeliver(key, pet, ORDERS, [a, b]);
    const before = ORDERS * EVENTS_PER_ORDER;
    await until('the events so far received', () => client.received.length === before, 5_000, client.describe);

    const stoppedAt = performance.now();
    const stopped = a.stop('SIGTERM').then((code) => ({ code, ms: performance.now() - stoppedAt }));
    await placeAndDeliver(key, pet, ORDERS, [b]);
    const exit = await stopped;
    expect(exit.code, a.output()).toBe(0);
    expect(exit.ms).toBeLessThan(GRACE_MS);
    await until('every event received', () => client.received.length >= 2 * before, 15_000, client.describe);
    await settled(client);
    client.close();

    expectEveryEventOnce(client, await listedIds(b, key));
    const [onA, onB, ...more] = client.connections;
    expect(more, client.describe()).toEqual([]);
    expect(onA!.server.url).toBe(a.url);
    expect(onA).toMatchObject({ status: 200, ending: 'clean', lastEventId: null });
    expect(onA!.events).toBeGreaterThanOrEqual(before);
    expect(onA!.endedAt).toBeGreaterThan(stoppedAt);
    expect(onB!.server.url).toBe(b.url);
    expect(onB).toMatchObject({ status: 200, lastEventId: client.received[onA!.events - 1]!.id });
    expect(waits(client.connections)[0]).toBeGreaterThanOrEqual(RETRY_MS - TIMER_SLACK_MS);
  });

  it('the report card: an eventsource client passes resumes-streams', async () => {
    const DROP_EVERY = 3;
    const { a, b, key, pet } = await keyed();
    const client = follow(key, {
      route: (n) => (n % 2 ? b : a),
      prefer: `fault=drop; events=${DROP_EVERY}`,
      requestIds: 'card-stream',
    });
    clients.push(client);
    await until('the stream opens', () => client.open, 10_000, client.describe);
    // Six events: two streams dropped, each after its third, and a third stream resuming.
    await placeAndDeliver(key, pet, 2, [a, b]);
    await until(
      'two drops, and a third stream',
      () => client.received.length === 2 * DROP_EVERY && client.connections.length === 3 && client.open,
      15_000,
      client.describe,
    );
    client.close();
    expectEveryEventOnce(client, await listedIds(b, key));

    for (const server of [a, b]) {
      const card = (await call(server, key, 'GET', '/report-card')) as {
        checks: { id: string; status: string; seen: number; failed: number }[];
      };
      expect(card.checks.find((check) => check.id === 'resumes-streams')).toMatchObject({
        status: 'passed',
        seen: 2,
        failed: 0,
      });
    }
    // Each resume was judged, and passed: its exchange in the request log (kept as its stream ended) carries the check.
    for (const n of [1, 2]) {
      const url = `${a.url}/request-log/card-stream-${n}`;
      let entry = await fetch(url, { headers: { 'x-api-key': key } });
      for (let tries = 0; entry.status === 404 && tries < 100; tries++) {
        await sleep(50);
        entry = await fetch(url, { headers: { 'x-api-key': key } });
      }
      expect(entry.status, `card-stream-${n}`).toBe(200);
      expect(((await entry.json()) as { checks: unknown[] }).checks).toContainEqual(
        expect.objectContaining({ id: 'resumes-streams', outcome: 'passed' }),
      );
    }
  });
});
