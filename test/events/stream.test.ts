import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, type TestApp, testApp } from '../helpers/app.js';
import { type Event, eventPage } from '../helpers/events.js';
import { BASE, firstPetWith, type Order, ordersAs } from '../helpers/orders.js';
import { type OpenedStream, openStream } from '../helpers/sse.js';

/** `GET /events/stream` (docs/orders-and-events.md#the-event-stream), on the suite's store, over real sockets. */

let t: TestApp;
let live: string;
let available: number;
const opened: OpenedStream[] = [];

const place = async (key: string) => json<Order>(await ordersAs(t, key).post({ petId: available, quantity: 1 }));
const advance = (key: string, id: number) =>
  t.request({ method: 'POST', url: `/store/orders/${id}/advance`, headers: { 'x-api-key': key } });
async function stream(key: string, query = '', headers: Record<string, string> = {}): Promise<OpenedStream> {
  const s = await openStream(`${t.url}/events/stream${query}`, { 'x-api-key': key, ...headers });
  opened.push(s);
  return s;
}
/** Opened and past its `retry`: following the key live. */
async function following(key: string, query = '', headers: Record<string, string> = {}) {
  const s = await stream(key, query, headers);
  expect(s.status).toBe(200);
  expect(await s.next()).toEqual({ retry: '3000' });
  return s;
}

beforeAll(async () => {
  t = await testApp({ overSocket: true });
  live = await t.newKey({ plan: 'enterprise', perMinute: 10_000, perDay: 100_000 });
  available = await firstPetWith(t, live, 'available');
});
afterAll(async () => {
  for (const s of opened) s.close();
  await t.close();
});

describe('the stream', () => {
  it('opens as text/event-stream with retry first, counted, with the rate-limit headers', async () => {
    const key = await t.newKey({ plan: 'pro' });
    const s = await stream(key);
    expect(s.status).toBe(200);
    // Counted in the instance's metrics once it follows the key.
    let open = '';
    for (let tries = 0; tries < 500 && !/^petstore_event_streams_open [1-9]/m.test(open); tries++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      open = (await t.admin.inject({ url: '/metrics' })).body;
    }
    expect(open).toMatch(/^petstore_event_streams_open [1-9]\d*$/m);
    expect(s.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(s.headers.get('cache-control')).toBe('no-store');
    expect(s.headers.get('x-ratelimit-remaining')).toMatch(/^\d+$/);
    expect(await s.next()).toEqual({ retry: '3000' });
    const usage = json<{ windows: { minute: { used: number } } }>(await ordersAs(t, key).get('/usage'));
    // The opening counted; `/usage` itself counts nothing.
    expect(usage.windows.minute.used).toBe(1);
    s.close();
  });

  it('sends each new event of the key as id, event and data, the event as GET /events/{eventId} shows it', async () => {
    const key = await t.newKey({ plan: 'enterprise', perMinute: 10_000, perDay: 100_000, test: true });
    const s = await following(key);
    const order = await place(key);
    await advance(key, order.id);
    const frames = await s.events(2);
    const [placed, approved] = frames.map((frame) => JSON.parse(frame.data!) as Event);
    expect(frames.map((frame) => frame.event)).toEqual(['order.placed', 'order.approved']);
    expect(frames.map((frame) => frame.id)).toEqual([placed!.id, approved!.id]);
    expect(placed!.data.id).toBe(order.id);
    const shown = json<Event>(await ordersAs(t, key).get(`/events/${approved!.id}`));
    expect(approved).toEqual(shown);
  });

  it('sends nothing of another key, and only the types asked for', async () => {
    const key = await t.newKey({ plan: 'enterprise', perMinute: 10_000, perDay: 100_000, test: true });
    const other = await t.newKey({ plan: 'enterprise', perMinute: 10_000, perDay: 100_000, test: true });
    const s = await following(key, '?type=order.approved&type=order.cancelled');
    await place(other);
    const order = await place(key);
    await advance(key, order.id);
    await ordersAs(t, key).del(`/store/orders/${order.id}`);
    const frames = await s.events(2);
    expect(frames.map((frame) => frame.event)).toEqual(['order.approved', 'order.cancelled']);
  });

  it('shapes the data in the version the request asked for', async () => {
    const key = await t.newKey({ plan: 'enterprise', perMinute: 10_000, perDay: 100_000, test: true });
    const versions = json<{ data: { version: string }[] }>(await ordersAs(t, key).get('/versions')).data;
    const oldest = versions[versions.length - 1]!.version;
    const s = await following(key, '', { 'petstore-version': oldest });
    await place(key);
    const [frame] = await s.events(1);
    const shown = await t.request({
      url: `/events/${frame!.id}`,
      headers: { 'x-api-key': key, 'petstore-version': oldest },
    });
    expect(JSON.parse(frame!.data!)).toEqual(json(shown));
    expect(JSON.parse(frame!.data!).apiVersion).toBe(oldest);
  });
});

describe('resuming', () => {
  it('by Last-Event-ID: the events after it first, then live, none missed and none repeated', async () => {
    const key = await t.newKey({ plan: 'enterprise', perMinute: 10_000, perDay: 100_000, test: true });
    const first = await following(key);
    const a = await place(key);
    const [seen] = await first.events(1);
    first.close();
    // Written while no stream was open.
    await advance(key, a.id);
    const b = await place(key);
    const again = await following(key, '', { 'last-event-id': seen!.id! });
    await advance(key, b.id);
    const frames = await again.events(3);
    const listed = (await eventPage(t, key, 'limit=10')).data.reverse();
    expect(frames.map((frame) => frame.id)).toEqual(listed.slice(1).map((event) => event.id));
    expect(again.text.split('\nid: ').length - 1).toBe(3);
  });

  it('by ?after= the same way, Last-Event-ID winning when both are sent', async () => {
    const key = await t.newKey({ plan: 'enterprise', perMinute: 10_000, perDay: 100_000, test: true });
    await place(key);
    await place(key);
    await place(key);
    const listed = (await eventPage(t, key, 'limit=10')).data.reverse();
    const byAfter = await following(key, `?after=${listed[0]!.id}`);
    expect((await byAfter.events(2)).map((frame) => frame.id)).toEqual([listed[1]!.id, listed[2]!.id]);
    const both = await following(key, `?after=${listed[0]!.id}`, { 'last-event-id': listed[1]!.id });
    expect((await both.events(1)).map((frame) => frame.id)).toEqual([listed[2]!.id]);
  });

  it('refuses an id it does not keep with 400 event-id-unknown, before any stream', async () => {
    const key = await t.newKey({ plan: 'enterprise', perMinute: 10_000, perDay: 100_000, test: true });
    const other = await t.newKey({ plan: 'enterprise', perMinute: 10_000, perDay: 100_000, test: true });
    await place(other);
    const [theirs] = (await eventPage(t, other, 'limit=1')).data;
    for (const id of ['nonsense', 'evt_1a96fa337c6a71', theirs!.id, `${theirs!.id.slice(0, -1)}0`]) {
      const s = await stream(key, '', { 'last-event-id': id });
      expect(s.status, id).toBe(400);
      expect(s.headers.get('content-type')).toContain('application/problem+json');
      expect(s.body).toMatchObject({ type: `${BASE}/problems/event-id-unknown`, status: 400 });
    }
    const byAfter = await stream(key, `?after=${theirs!.id}`);
    expect(byAfter.body).toMatchObject({ type: `${BASE}/problems/event-id-unknown` });
  });
});

describe('open streams', () => {
  it('are five at most per key: the sixth gets 409 stream-limit, and a closed one frees its seat', async () => {
    const key = await t.newKey({ plan: 'enterprise', perMinute: 10_000, perDay: 100_000 });
    const five = await Promise.all([1, 2, 3, 4, 5].map(() => following(key)));
    const sixth = await stream(key);
    expect(sixth.status).toBe(409);
    expect(sixth.body).toMatchObject({ type: `${BASE}/problems/stream-limit`, status: 409 });
    five[0]!.close();
    for (let tries = 0; ; tries++) {
      const next = await stream(key);
      if (next.status === 200) break;
      expect(tries).toBeLessThan(250);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  });

  it('are not opened by a HEAD, which is told the headers a GET would get', async () => {
    const key = await t.newKey({ plan: 'enterprise', perMinute: 10_000, perDay: 100_000 });
    for (let i = 0; i < 7; i++) {
      const head = await t.request({ method: 'HEAD', url: '/events/stream', headers: { 'x-api-key': key } });
      expect(head.statusCode).toBe(200);
      expect(head.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    }
    await Promise.all([1, 2, 3, 4, 5].map(() => following(key)));
  });

  it('end when the key is revoked: the client sees a clean end', async () => {
    const created = await t.keys.create({ plan: 'pro' });
    const s = await following(created.key);
    await t.keys.revoke(created.record.id);
    expect(await s.next()).toBeUndefined();
  });

  it('end after the next event with Prefer: fault=drop (a test key), which no other operation applies', async () => {
    const key = await t.newKey({ plan: 'enterprise', perMinute: 10_000, perDay: 100_000, test: true });
    const s = await following(key, '', { prefer: 'fault=drop' });
    expect(s.headers.get('preference-applied')).toBe('fault=drop');
    await place(key);
    await place(key);
    expect(await s.events(1)).toHaveLength(1);
    expect(await s.next()).toBeUndefined();
    const elsewhere = await t.request({ url: '/pets/1', headers: { 'x-api-key': key, prefer: 'fault=drop' } });
    expect(elsewhere.statusCode).toBe(200);
    expect(elsewhere.headers['preference-applied']).toBeUndefined();
  });

  it('end after the n-th event with Prefer: fault=drop; events=n', async () => {
    const key = await t.newKey({ plan: 'enterprise', perMinute: 10_000, perDay: 100_000, test: true });
    const s = await following(key, '', { prefer: 'fault=drop; events=3' });
    for (let i = 0; i < 4; i++) await place(key);
    expect(await s.events(3)).toHaveLength(3);
    expect(await s.next()).toBeUndefined();
  });
});
