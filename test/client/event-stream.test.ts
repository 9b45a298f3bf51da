/**
 * The client's `events.stream()` against the real server over a socket (an event stream is no injected answer): the
 * key's events in order, each once, followed across the service's drops (`Prefer: fault=drop; events=n`, and the
 * `stream-resume` scenario for an unmodified client) after the stream's `retry` with `Last-Event-ID`, so that the
 * key's card passes `resumes-streams`; a refused opening waited out as any request; an unknown id ending it with
 * `EventIdUnknownError`; `break` and `signal` closing the connection. The client's `sleep` moves the service's fake
 * clock: its 3 s waits pass at once and count as waited.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type Event,
  EventIdUnknownError,
  PetstoreClient,
  type PetstoreClientOptions,
  type ReportCard,
  type ResponseEvent,
} from '../../client/index.js';
import { json, type TestApp, testApp } from '../helpers/app.js';
import { eventsOf } from '../helpers/events.js';
import { openStream, type OpenedStream } from '../helpers/sse.js';
import { sharedClock } from './harness.js';

let t: TestApp;
beforeAll(async () => {
  t = await testApp({ overSocket: true });
});
afterAll(async () => t.close());

/** An opening of the stream as the client sent it: when (the shared clock), after which event, and its status. */
interface Opening {
  at: number;
  lastEventId: string | null;
  status?: number;
}

/** A test key (of a plan that leaves room), a client of it over the socket, and what its stream openings were. */
async function streaming(more: Partial<PetstoreClientOptions> = {}) {
  const key = await t.newKey({ plan: 'enterprise', perMinute: 10_000, perDay: 100_000, test: true });
  const openings: Opening[] = [];
  const responses: ResponseEvent[] = [];
  const client = new PetstoreClient({
    apiKey: key,
    baseUrl: t.url!,
    ...sharedClock(t.clock),
    onDeprecation: () => {},
    fetch: async (request) => {
      const opening = new URL(request.url).pathname === '/events/stream';
      const sent: Opening = { at: t.clock(), lastEventId: request.headers.get('last-event-id') };
      const response = await fetch(request);
      if (opening) openings.push({ ...sent, status: response.status });
      return response;
    },
    onResponse: (event) => responses.push(event),
    ...more,
  });
  // The orders are placed by a client of their own: no `Prefer` of the stream's on them.
  const placing = new PetstoreClient({
    apiKey: key,
    baseUrl: t.url!,
    ...sharedClock(t.clock),
    onDeprecation: () => {},
  });
  const card = async () => json<ReportCard>(await t.request({ url: '/report-card', headers: { 'x-api-key': key } }));
  return {
    key,
    client,
    openings,
    responses,
    /** One order placed and approved: two events. */
    order: async () => void (await placing.advanceOrder((await placing.placeOrder({ petId: 1 })).id)),
    check: async (id: string) => (await card()).checks.find((check) => check.id === id),
    /** The key's events, oldest first, as `GET /events` lists them. */
    listed: async () => (await eventsOf(t, key)).reverse(),
  };
}

/** The first `count` events of `events`; then the loop breaks. */
async function take(events: AsyncIterable<Event>, count: number): Promise<Event[]> {
  const taken: Event[] = [];
  for await (const event of events) {
    taken.push(event);
    if (taken.length === count) break;
  }
  return taken;
}

/** Resolves once the client's stream is open (its opening answered 200); rejects after 5 s. */
async function opened(s: { openings: Opening[] }, count = 1): Promise<void> {
  for (const deadline = Date.now() + 5_000; s.openings.filter((o) => o.status === 200).length < count;) {
    if (Date.now() > deadline) throw new Error(`no stream opened: ${JSON.stringify(s.openings)}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('events.stream', () => {
  it('yields the events written after `after`, then the live ones, in order, each once, typed', async () => {
    const s = await streaming();
    await s.order();
    const [first] = await s.listed();
    const taking = take(s.client.events.stream({ after: first!.id }), 5);
    await opened(s);
    await s.order();
    await s.order();
    const events = await taking;
    expect(events.map((event) => event.id)).toEqual((await s.listed()).slice(1).map((event) => event.id));
    expect(events.map((event) => event.type)).toEqual([
      'order.approved',
      'order.placed',
      'order.approved',
      'order.placed',
      'order.approved',
    ]);
    expect(events[0]).toMatchObject({ livemode: false, data: { petId: 1, status: 'approved' } });
    expect(s.openings).toEqual([expect.objectContaining({ lastEventId: first!.id, status: 200 })]);
    expect(s.responses.find((r) => r.operation === 'streamEvents')?.rateLimit.remaining).toBeGreaterThan(0);
  });

  it('only the types asked for', async () => {
    const s = await streaming();
    await s.order();
    const [first] = await s.listed();
    const taking = take(s.client.events.stream({ after: first!.id, types: ['order.approved', 'order.cancelled'] }), 2);
    await opened(s);
    await s.order();
    const events = await taking;
    expect(events.map((event) => event.type)).toEqual(['order.approved', 'order.approved']);
  });

  it('resumes across drops after the stream’s retry with Last-Event-ID: none missed or repeated; resumes-streams passes', async () => {
    const s = await streaming({ prefer: 'fault=drop; events=2' });
    await s.order();
    const [first] = await s.listed();
    const taking = take(s.client.events.stream({ after: first!.id }), 7);
    await opened(s);
    // Three orders more, two events each: written as the stream is dropped and resumed.
    for (let i = 0; i < 3; i++) await s.order();
    const events = await taking;
    const listed = await s.listed();
    expect(events.map((event) => event.id)).toEqual(listed.slice(1).map((event) => event.id));
    // Each stream ends after its second event: four openings, each after the last event received, 3 s after the end.
    const ids = events.map((event) => event.id);
    expect(s.openings.map((o) => o.lastEventId)).toEqual([first!.id, ids[1], ids[3], ids[5]]);
    expect(s.openings.every((o) => o.status === 200)).toBe(true);
    for (let i = 1; i < s.openings.length; i++)
      expect(s.openings[i]!.at - s.openings[i - 1]!.at).toBeGreaterThanOrEqual(3_000);
    expect(await s.check('resumes-streams')).toMatchObject({ status: 'passed', seen: 3, failed: 0 });
  });

  it('an unmodified client passes the stream-resume scenario: dropped after its first event, it resumes', async () => {
    const s = await streaming();
    const armed = await t.request({
      method: 'PUT',
      url: '/test-scenario',
      headers: { 'x-api-key': s.key },
      payload: { scenario: 'stream-resume' },
    });
    expect(armed.statusCode, armed.body).toBe(200);
    const events: Event[] = [];
    const following = (async () => {
      for await (const event of s.client.events.stream({ types: ['order.placed'] })) {
        events.push(event);
        if (events.length === 2) break;
      }
    })();
    await opened(s);
    await s.order();
    // The second order once the first's order.placed has arrived (and the stream was dropped after it).
    for (const deadline = Date.now() + 5_000; events.length < 1 && Date.now() < deadline;)
      await new Promise((resolve) => setTimeout(resolve, 10));
    await s.order();
    await following;
    const placed = (await s.listed()).filter((event) => event.type === 'order.placed');
    expect(events.map((event) => event.id)).toEqual(placed.map((event) => event.id));
    expect(s.openings.map((o) => o.lastEventId)).toEqual([null, placed[0]!.id]);
    const script = json<{ done: boolean }>(await t.request({ url: '/test-scenario', headers: { 'x-api-key': s.key } }));
    expect(script.done).toBe(true);
    expect(await s.check('resumes-streams')).toMatchObject({ status: 'passed', failed: 0 });
  });

  it('waits out a refused opening as any request: a 503 backed off, a 429 until its Retry-After', async () => {
    const s = await streaming();
    const steps = [
      { match: 'GET /events/stream', answer: '503' },
      { match: 'GET /events/stream', answer: '429' },
      { match: 'GET /events/stream', answer: 'pass' },
    ];
    const armed = await t.request({
      method: 'PUT',
      url: '/test-scenario',
      headers: { 'x-api-key': s.key },
      payload: { steps },
    });
    expect(armed.statusCode, armed.body).toBe(200);
    await s.order();
    const [first] = await s.listed();
    const [event] = await take(s.client.events.stream({ after: first!.id }), 1);
    expect(event!.type).toBe('order.approved');
    expect(s.openings.map((o) => o.status)).toEqual([503, 429, 200]);
    const refused = s.responses.find((r) => r.status === 429)!;
    expect(s.openings[2]!.at - s.openings[1]!.at).toBeGreaterThanOrEqual(1000 * refused.rateLimit.retryAfterSeconds!);
    expect(await s.check('honours-retry-after')).toMatchObject({ failed: 0 });
  });

  it('with client credentials, opens the stream with the access token the client’s calls share', async () => {
    const { record, key } = await t.keys.create({ plan: 'enterprise', perMinute: 10_000, perDay: 100_000, test: true });
    const sent: { route: string; authorization: string | null }[] = [];
    const client = new PetstoreClient({
      clientId: record.id,
      clientSecret: key,
      baseUrl: t.url!,
      ...sharedClock(t.clock),
      onDeprecation: () => {},
      fetch: (request) => {
        const route = `${request.method} ${new URL(request.url).pathname}`;
        sent.push({ route, authorization: request.headers.get('authorization') });
        return fetch(request);
      },
    });
    const order = await client.placeOrder({ petId: 1 });
    const [placed] = (await client.listEvents({ limit: 1 })).data;
    const taking = take(client.events.stream({ after: placed!.id }), 1);
    await client.advanceOrder(order.id);
    expect((await taking).map((event) => event.type)).toEqual(['order.approved']);
    const token = sent.find((request) => request.route === 'POST /store/orders')!.authorization;
    expect(token).toMatch(/^Bearer /);
    expect(sent.filter((request) => request.route === 'GET /events/stream')).toEqual([
      { route: 'GET /events/stream', authorization: token },
    ]);
    expect(sent.filter((request) => request.route === 'POST /oauth/token')).toHaveLength(1);
  });

  it('ends with EventIdUnknownError, a 400, for an id the service does not keep', async () => {
    const s = await streaming();
    const events = s.client.events.stream({ after: 'evt_1a96fa337c6a71' });
    await expect(take(events, 1)).rejects.toMatchObject({ constructor: EventIdUnknownError, status: 400 });
    expect(s.openings).toHaveLength(1);
  });

  it('break and signal close the connection: the stream’s seat is free again, and the loop ends without error', async () => {
    const s = await streaming();
    await s.order();
    const [first] = await s.listed();
    expect(await take(s.client.events.stream({ after: first!.id }), 1)).toHaveLength(1);
    const stop = new AbortController();
    const seen: Event[] = [];
    const following = (async () => {
      for await (const event of s.client.events.stream({ signal: stop.signal })) seen.push(event);
    })();
    await opened(s, 2);
    stop.abort();
    await following;
    expect(seen).toEqual([]);
    // Both closed: the key's five seats open again (a seat comes back once the service sees its connection close).
    const five: OpenedStream[] = [];
    try {
      for (let tries = 0; five.length < 5; tries++) {
        const next = await openStream(`${t.url}/events/stream`, { 'x-api-key': s.key });
        if (next.status === 200) five.push(next);
        else expect(tries).toBeLessThan(100);
        if (next.status !== 200) await new Promise((resolve) => setTimeout(resolve, 20));
      }
    } finally {
      for (const stream of five) stream.close();
    }
    // Stopping before it opens opens nothing.
    const before = s.openings.length;
    expect(await take(s.client.events.stream({ signal: AbortSignal.abort() }), 1)).toEqual([]);
    expect(s.openings).toHaveLength(before);
  });
});
