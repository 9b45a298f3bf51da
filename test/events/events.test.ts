import { NEWEST_VERSION } from '../../src/versions/versions.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WALK_LIMIT } from '../../src/events/repository.js';
import { EventRetention } from '../../src/events/retention.js';
import { json, type TestApp, testApp } from '../helpers/app.js';
import { type Event, eventPage, eventsOf } from '../helpers/events.js';
import { expectProblem, firstPetWith, type Order, ordersAs, type Page } from '../helpers/orders.js';

/** `GET /events` and `GET /events/{eventId}` (docs/orders-and-events.md). */

let t: TestApp;
let live: string;
let test: string;
let available: number;

const get = (key: string, url: string) => t.app.inject({ url, headers: { 'x-api-key': key } });
const place = async (key: string) => json<Order>(await ordersAs(t, key).post({ petId: available, quantity: 1 }));

beforeAll(async () => {
  t = await testApp();
  live = await t.newKey({ plan: 'enterprise', perMinute: 10_000, perDay: 100_000 });
  test = await t.newKey({ plan: 'business', test: true });
  available = await firstPetWith(t, live, 'available');
});
afterAll(async () => {
  await t.close();
});

describe('an event', () => {
  it('is {id, type, timestamp, livemode, apiVersion, data}: the order as of the event, livemode true for a live key', async () => {
    const order = await place(live);
    const [event] = (await eventPage(t, live, 'limit=1')).data;
    expect(Object.keys(event!)).toEqual(['id', 'type', 'timestamp', 'livemode', 'apiVersion', 'data']);
    expect(event).toEqual({
      id: expect.stringMatching(/^evt_[0-9a-z]{1,11}[0-9a-f]{12}$/),
      type: 'order.placed',
      timestamp: new Date(t.clock()).toISOString(),
      livemode: true,
      apiVersion: NEWEST_VERSION,
      data: order,
    });
  });

  it('has livemode false for a test key', async () => {
    const order = await place(test);
    expect((await eventPage(t, test, 'limit=1')).data[0]).toMatchObject({
      type: 'order.placed',
      livemode: false,
      data: order,
    });
  });

  it('reads the same at GET /events/{eventId}', async () => {
    await place(live);
    const [newest] = (await eventPage(t, live, 'limit=1')).data;
    const response = await get(live, `/events/${newest!.id}`);
    expect(response.statusCode).toBe(200);
    expect(json(response)).toEqual(newest);
  });

  it('answers 404 for an id nobody has, and 400 for one of another form', async () => {
    expectProblem(await get(live, '/events/evt_zzzz000000000000'), 404, 'not-found');
    const invalid = await get(live, '/events/123');
    expectProblem(invalid, 400, 'invalid-request');
    expect(json(invalid).errors).toEqual([expect.objectContaining({ in: 'path', name: 'eventId' })]);
  });
});

describe('GET /events', () => {
  it('lists newest first, and filters by type (repeatable) and by order', async () => {
    const key = await t.newKey({ plan: 'business', test: true });
    const first = await place(key);
    const second = await place(key);
    await t.app.inject({ method: 'POST', url: `/store/orders/${first.id}/advance`, headers: { 'x-api-key': key } });
    await ordersAs(t, key).del(`/store/orders/${second.id}`);
    const all = await eventsOf(t, key);
    expect(all.map((e) => [e.type, e.data.id])).toEqual([
      ['order.cancelled', second.id],
      ['order.approved', first.id],
      ['order.placed', second.id],
      ['order.placed', first.id],
    ]);
    expect((await eventsOf(t, key, 'type=order.placed')).map((e) => e.data.id)).toEqual([second.id, first.id]);
    expect((await eventsOf(t, key, 'type=order.approved&type=order.cancelled')).map((e) => e.type)).toEqual([
      'order.cancelled',
      'order.approved',
    ]);
    expect((await eventsOf(t, key, `orderId=${first.id}`)).map((e) => e.type)).toEqual([
      'order.approved',
      'order.placed',
    ]);
    expect((await eventsOf(t, key, `orderId=${first.id}&type=order.placed`)).map((e) => e.id)).toEqual([all[3]!.id]);
    expect(await eventsOf(t, key, 'orderId=9007199254740993')).toEqual([]);
  });

  it.each([
    ['type=order.shipped', 'type/0'],
    ['orderId=0', 'orderId'],
    ['orderId=abc', 'orderId'],
    ['limit=101', 'limit'],
    ['cursor=not-ours', 'cursor'],
  ])('refuses %s with a 400 naming %s, and counts it', async (query, name) => {
    const response = await get(live, `/events?${query}`);
    expectProblem(response, 400, 'invalid-request');
    expect(json(response).errors.map((e: { name: string }) => e.name)).toEqual([name]);
    expect(response.headers['x-ratelimit-remaining']).toBeDefined();
  });

  it('never skips or repeats an event while new ones arrive between pages', async () => {
    const key = await t.newKey({ plan: 'business', test: true });
    for (let i = 0; i < 10; i++) await place(key);
    const before = await eventsOf(t, key);
    const walked: Event[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      pages++;
      const page: Page<Event> = await eventPage(t, key, `limit=3${cursor ? `&cursor=${cursor}` : ''}`);
      walked.push(...page.data);
      cursor = page.nextCursor;
      // Two more orders (two events) and a move between every two pages.
      t.clock.advance(1_000);
      const order = await place(key);
      await place(key);
      await t.app.inject({ method: 'POST', url: `/store/orders/${order.id}/advance`, headers: { 'x-api-key': key } });
    } while (cursor !== null);
    expect(walked.map((e) => e.id)).toEqual(before.map((e) => e.id));
    // A client catching up reads from the top down to the newest event it has, and misses nothing.
    const now = await eventsOf(t, key);
    const newer = now.slice(
      0,
      now.findIndex((e) => e.id === before[0]!.id),
    );
    expect(newer).toHaveLength(pages * 3);
    expect([...newer, ...before]).toEqual(now);
  });
});

describe('a filtered page', () => {
  it(`looks through at most ${WALK_LIMIT} events: it may come back short, even empty, with a cursor that goes on from there`, async () => {
    const { record, key } = await t.keys.create({ plan: 'enterprise', perMinute: 10_000, perDay: 100_000, test: true });
    const first = json<Order>(await ordersAs(t, key).post({ petId: available, quantity: 1 }));
    await t.app.inject({ method: 'POST', url: `/store/orders/${first.id}/advance`, headers: { 'x-api-key': key } });
    // More orders than one walk looks through, placed (and recorded by the store) straight in it.
    const at = new Date(t.clock()).toISOString();
    const row = {
      api_key_id: record.id,
      pet_id: available,
      quantity: 1,
      ship_date: at,
      status: 'placed',
      complete: 0,
      created_at: at,
    };
    for (let i = 0; i < WALK_LIMIT + 100; i += 500) {
      await t.db
        .insertInto('orders')
        .values(Array.from({ length: Math.min(500, WALK_LIMIT + 100 - i) }, () => row))
        .execute();
    }
    const page = await eventPage(t, key, 'type=order.approved&limit=5');
    expect(page.data).toEqual([]);
    expect(page.nextCursor).not.toBeNull();
    const approved = await eventsOf(t, key, 'type=order.approved&limit=5');
    expect(approved.map((e) => e.data.id)).toEqual([first.id]);
    expect(await eventsOf(t, key, 'limit=100')).toHaveLength(WALK_LIMIT + 102);
  });
});

describe('retention', () => {
  it('deletes events older than EVENTS_RETENTION_DAYS (30 by default) in slices, and keeps the rest', async () => {
    const own = await testApp();
    try {
      const key = await own.newKey({ plan: 'enterprise', perMinute: 10_000, perDay: 100_000 });
      const pet = await firstPetWith(own, key, 'available');
      for (let i = 0; i < 25; i++) await ordersAs(own, key).post({ petId: pet, quantity: 1 });
      own.clock.advance(24 * 3_600_000);
      for (let i = 0; i < 5; i++) await ordersAs(own, key).post({ petId: pet, quantity: 1 });
      const kept = (await eventsOf(own, key)).slice(0, 5);

      own.clock.advance(29 * 24 * 3_600_000);
      expect(await own.retention.sweep()).toBe(0);
      own.clock.advance(1);
      // Slices of at most 4 rows: six whole ones, then one that meets the first event still kept.
      const pace = { sliceMs: 5, idleShare: 1, busyShare: 1, first: 4, min: 1, max: 4 };
      const sliced = new EventRetention({
        db: own.db,
        clock: own.clock,
        retentionMs: 30 * 24 * 3_600_000,
        log: { warn: () => {}, info: () => {} },
        pace,
      });
      expect(await sliced.sweep()).toBe(25);
      expect(await eventsOf(own, key)).toEqual(kept);
      expect(await own.retention.sweep()).toBe(0);
    } finally {
      await own.close();
    }
  });
});
