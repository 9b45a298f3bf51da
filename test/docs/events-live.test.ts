import { join } from 'node:path';
import type { Browser, Page, Request } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NEWEST_VERSION } from '../../src/versions/versions.js';
import { apiKeyForm, chromiumInstalled, launchChromium } from '../helpers/browser.js';
import { demoKey, type Server, startServer, tempDir } from '../helpers/process.js';

interface Shown {
  id: string | null;
  type: string | null;
  orderId: string | null;
}
interface Event {
  id: string;
  type: string;
  data: { id: number };
}
interface LogEntry {
  url: string;
  ending: string;
  requestHeaders: Record<string, string>;
}

// The docs page's events panel (public/docs/petstore-events.js): the authorised key's events as GET /events/stream
// sends them, read with fetch. The key's script drops the page's first stream after its first event; the page waits
// the stream's `retry` (3 s) and resumes with Last-Event-ID, and shows the events written meanwhile, none twice.
describe.skipIf(!chromiumInstalled())("/docs shows the authorised key's events live", { timeout: 60_000 }, () => {
  let server: Server;
  let browser: Browser;
  let page: Page;
  let key: string;
  /** The page's requests for the stream, as sent. */
  const streams: Request[] = [];
  /** Two pets to order. */
  let pets: [number, number];
  /** The first order, and the event it was placed with: the last event of the page's first stream. */
  let first: { order: number; event: string };

  /** A request of the test key, from here (past the page). */
  async function send<T>(method: string, path: string, body?: unknown): Promise<{ status: number; json: T }> {
    const response = await fetch(`${server.url}${path}`, {
      method,
      headers: {
        'x-api-key': key,
        'petstore-version': NEWEST_VERSION,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: response.status, json: (await response.json()) as T };
  }
  /** Places an order (or moves one a step): the id of the event it wrote. */
  async function write(path: string, body?: unknown): Promise<number> {
    const { status, json } = await send<{ id: number }>('POST', path, body);
    expect(status, path).toBe(path === '/store/orders' ? 201 : 200);
    return json.id;
  }

  beforeAll(async () => {
    // No order moves by itself: every event is one the test wrote.
    server = await startServer({
      DATABASE_URL: join(tempDir(), 'p.db'),
      FULFILMENT_APPROVE_SECONDS: '0',
      FULFILMENT_DELIVER_SECONDS: '0',
    });
    key = demoKey(server, 'test');
    // The key's first stream is dropped after its first event; its second is answered normally.
    const armed = await send('PUT', '/test-scenario', {
      steps: [
        { match: 'GET /events/stream', answer: 'drop' },
        { match: 'GET /events/stream', answer: 'pass' },
      ],
    });
    expect(armed.status).toBe(200);
    const available = await send<{ data: { id: number }[] }>('GET', '/pets?status=available&limit=2');
    pets = available.json.data.map((pet) => pet.id) as [number, number];
    expect(pets).toHaveLength(2);
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 1400 } });
    page.on('request', (request) => {
      if (new URL(request.url()).pathname === '/events/stream') streams.push(request);
    });
    await page.goto(`${server.url.replace('127.0.0.1', 'localhost')}/docs`);
    await page.locator('.opblock').first().waitFor();
  });
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  const panel = () => page.locator('#petstore-events');
  /** The panel's list, newest first. */
  const shown = (): Promise<Shown[]> =>
    panel()
      .locator('.petstore-events__entry')
      .evaluateAll((rows) =>
        rows.map((row) => ({
          id: row.getAttribute('data-event-id'),
          type: row.getAttribute('data-type'),
          orderId: row.getAttribute('data-order-id'),
        })),
      );
  const state = () => panel().getAttribute('data-state');
  /** Until the panel is in `phase` with `opened` streams opened so far. */
  const until = (phase: string, opened: number) =>
    page.waitForFunction(
      ([phase, opened]) => {
        const panel = document.querySelector<HTMLElement>('#petstore-events');
        return panel?.dataset.state === phase && panel.dataset.opened === String(opened);
      },
      [phase, opened] as const,
      { timeout: 10_000 },
    );
  const untilShown = (count: number) =>
    page.waitForFunction(
      (count) => document.querySelectorAll('#petstore-events .petstore-events__entry').length >= count,
      count,
      { timeout: 10_000 },
    );
  /** The key's events as GET /events lists them, newest first, as the panel shows them. */
  async function listed(): Promise<Shown[]> {
    const { json } = await send<{ data: Event[] }>('GET', '/events?limit=100');
    return json.data.map(({ id, type, data }) => ({ id, type, orderId: String(data.id) }));
  }
  /** The page's streams as the key's request log holds them, oldest first (each is written once it ended). */
  async function loggedStreams(): Promise<LogEntry[]> {
    const { json } = await send<{ data: LogEntry[] }>('GET', '/request-log?limit=100');
    return json.data.filter((entry) => entry.url.startsWith('/events/stream')).reverse();
  }

  async function authorise(value: string, on = page) {
    await on.locator('.auth-wrapper .authorize').click();
    await apiKeyForm(on).locator('#api_key_value').fill(value);
    await apiKeyForm(on).locator('.auth-btn-wrapper .authorize').click();
    await apiKeyForm(on).locator('.btn-done').click();
  }

  it('is hidden until a key is authorised, and opens no stream until asked to follow', async () => {
    expect(await panel().isHidden()).toBe(true);
    await authorise(key);
    await panel().waitFor();
    expect(await panel().locator('#petstore-events-title').textContent()).toContain('Your events, live');
    expect([await state(), await panel().locator('button[data-events="follow"]').count()]).toEqual(['idle', 1]);
    expect(streams).toEqual([]);
  });

  it("shows an order's events as they are written, from the stream read with the authorised key", async () => {
    await panel().locator('button[data-events="follow"]').click();
    await until('live', 1);
    expect(await panel().locator('.petstore-events__empty').textContent()).toContain('None yet');
    const headers = await streams[0]!.allHeaders();
    expect(headers['x-api-key'] === key).toBe(true);
    expect([headers['petstore-version'], headers['last-event-id']]).toEqual([NEWEST_VERSION, undefined]);

    const order = await write('/store/orders', { petId: pets[0], quantity: 1 });
    await untilShown(1);
    const [placed] = (await listed()) as [Shown];
    expect(placed).toMatchObject({ type: 'order.placed', orderId: String(order) });
    expect(await shown()).toEqual([placed]);
    const row = panel().locator('.petstore-events__entry').first();
    expect(await row.locator('.petstore-events__type').textContent()).toBe('order.placed');
    expect(await row.locator('.petstore-events__order').textContent()).toBe(`order ${order}`);
    expect(await row.locator('.petstore-events__id').textContent()).toBe(placed.id);
    expect(await row.locator('.petstore-events__time').textContent()).toMatch(/^\d{2}:\d{2}:\d{2} UTC$/);
    first = { order, event: placed.id! };
  });

  it('resumes after the service drops the stream: after its retry, with Last-Event-ID, each event once, in order', async () => {
    // The script dropped the stream after that event: the page waits its retry.
    await until('waiting', 1);
    expect(await panel().locator('.petstore-events__status').textContent()).toMatch(
      /^The service ended the stream: reconnecting in 3 s after evt_/,
    );
    const dropped = Date.now();
    // Written while no stream is open: the next one must bring them.
    const other = await write('/store/orders', { petId: pets[1], quantity: 1 });
    await write(`/store/orders/${first.order}/advance`);
    expect(streams).toHaveLength(1);
    await until('live', 2);
    expect(Date.now() - dropped).toBeGreaterThan(2_000);
    await write(`/store/orders/${other}/advance`);
    await untilShown(4);
    // A moment for any event shown twice to show.
    await page.waitForTimeout(300);
    const events = await listed();
    expect(events.map(({ type, orderId }) => `${type} ${orderId}`)).toEqual([
      `order.approved ${other}`,
      `order.approved ${first.order}`,
      `order.placed ${other}`,
      `order.placed ${first.order}`,
    ]);
    expect(await shown()).toEqual(events);
    // The second stream resumed after the last event the first sent.
    expect(streams).toHaveLength(2);
    expect((await streams[1]!.allHeaders())['last-event-id']).toBe(first.event);

    // The service's view: the first stream dropped, the second resumed after its last event, as the card judged.
    await expect
      .poll(async () => (await loggedStreams()).map((entry) => [entry.ending, entry.requestHeaders['last-event-id']]))
      .toEqual([['dropped', undefined]]);
    const resumes = async () => {
      const { json } = await send<{ checks: { id: string; status: string; seen: number; failed: number }[] }>(
        'GET',
        '/report-card',
      );
      return json.checks.find((check) => check.id === 'resumes-streams');
    };
    await expect.poll(resumes).toMatchObject({ status: 'passed', seen: 1, failed: 0 });
  });

  it('stops the stream when the key is logged out, and hides its events', async () => {
    // The column beside the operations, as tall as the page with the card and the log unfolded, would cover Authorize.
    await page.locator('#petstore-card button[data-card="fold"]').click();
    await page.locator('#petstore-log button[data-log="fold"]').click();
    await page.locator('.auth-wrapper .authorize').click();
    await apiKeyForm(page).locator('.auth-btn-wrapper button', { hasText: 'Logout' }).click();
    await apiKeyForm(page).locator('.btn-done').click();
    await panel().waitFor({ state: 'hidden' });
    // The page closed the second stream: the log holds it once it ended, closed by the client.
    await expect
      .poll(async () => (await loggedStreams()).map((entry) => [entry.ending, entry.requestHeaders['last-event-id']]))
      .toEqual([
        ['dropped', undefined],
        ['closed', first.event],
      ]);
    // Authorised again: an empty list, not following.
    await authorise(key);
    await panel().waitFor();
    expect([await state(), await panel().locator('.petstore-events__entry').count()]).toEqual(['idle', 0]);
    expect(streams).toHaveLength(2);
  });

  it('reads the stream as WHATWG HTML does: CRLF, CR, comments, data on several lines, an event cut short dropped', async () => {
    // A stream answered by the test in the service's place, its lines ended every way the format allows.
    const event = (id: string, type: string, order: number) =>
      JSON.stringify({ id, type, timestamp: '2026-11-29T10:00:00.000Z', data: { id: order } });
    const frames = [
      ': hello\r\nretry: 200\r\n\r\n',
      `id: evt_a\r\nevent: order.placed\r\ndata: ${event('evt_a', 'order.placed', 7)}\r\n\r\n`,
      // Its JSON on two `data` lines (joined by a line feed), its lines ended by CR alone.
      `id:evt_b\revent: order.approved\rdata: ${event('evt_b', 'order.approved', 7).replace(',"timestamp"', '\rdata: ,"timestamp"')}\r\r`,
      ': keep-alive\n\n',
      // Cut before its blank line: never dispatched, and its id not the one to resume after.
      `id: evt_c\nevent: order.delivered\ndata: ${event('evt_c', 'order.delivered', 7)}\n`,
    ];
    // On the page as the test before left it: the key authorised again, not following.
    const sent: Request[] = [];
    await page.route('**/events/stream', async (route) => {
      sent.push(route.request());
      // The second stream, after `retry`: nothing but a long retry, so that the page waits.
      const body = sent.length === 1 ? frames.join('') : 'retry: 60000\n\n';
      await route.fulfill({ status: 200, headers: { 'content-type': 'text/event-stream' }, body });
    });
    await panel().locator('button[data-events="follow"]').click();
    await until('waiting', 2);
    expect((await sent[0]!.allHeaders())['last-event-id']).toBeUndefined();
    expect((await sent[1]!.allHeaders())['last-event-id']).toBe('evt_b');
    expect((await shown()).map(({ id, type }) => [id, type])).toEqual([
      ['evt_b', 'order.approved'],
      ['evt_a', 'order.placed'],
    ]);
    expect(await panel().locator('.petstore-events__status').textContent()).toContain(
      'reconnecting in 60 s after evt_b',
    );
    await panel().locator('button[data-events="stop"]').click();
    expect([await state(), sent.length]).toEqual(['idle', 2]);
  });
});
