import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventsCommand, type EventsCliIo } from '../../src/event-stream/cli.js';
import { json, type TestApp, testApp } from '../helpers/app.js';
import { type Event, eventsOf } from '../helpers/events.js';
import { firstPetWith, ordersAs } from '../helpers/orders.js';
import { cli } from '../helpers/process.js';
import { NEWEST_VERSION } from '../../src/versions/versions.js';

/**
 * `petstore events tail` (docs/tools.md#following-a-keys-events), here in this process against the service over a
 * socket: a line per event as it comes, resumed across the service's drop after the stream's `retry` (a real 3 s:
 * the `eventsource` package waits it) with `Last-Event-ID`, ended by an interrupt (Ctrl-C) with exit code 0. Its
 * waits after a refused opening move the service's fake clock.
 */

let t: TestApp;
let pet: number;
beforeAll(async () => {
  t = await testApp({ overSocket: true });
  pet = await firstPetWith(t, await t.newKey('pro'), 'available');
});
afterAll(async () => t.close());

const as = (key: string) => ({ 'x-api-key': key });
/** A test key with room to spare, and one order of it placed and approved: its first two events. */
async function keyWithOrder() {
  const key = await t.newKey({ plan: 'enterprise', perMinute: 10_000, perDay: 100_000, test: true });
  await order(key);
  return key;
}
async function order(key: string): Promise<void> {
  const placed = json<{ id: number }>(await ordersAs(t, key).post({ petId: pet, quantity: 1 }));
  await t.request({ method: 'POST', url: `/store/orders/${placed.id}/advance`, headers: as(key) });
}
const listed = async (key: string): Promise<Event[]> => (await eventsOf(t, key)).reverse();

/** `petstore events tail …args` running until `stop()`: what it printed so far, and its exit code once stopped. */
function tail(args: string[], more: Partial<EventsCliIo> = {}) {
  const lines: string[] = [];
  const errors: string[] = [];
  const interrupt = new AbortController();
  const openings: (string | null)[] = [];
  const versions: (string | null)[] = [];
  let code: number | undefined;
  const command = eventsCommand({
    out: (text) => lines.push(text),
    err: (text) => errors.push(text),
    exit: (exit) => void (code = exit),
    sleep: async (ms) => t.clock.advance(ms),
    random: () => 0.5,
    interrupt: interrupt.signal,
    fetch: (input, init) => {
      openings.push(new Headers(init?.headers).get('last-event-id'));
      versions.push(new Headers(init?.headers).get('petstore-version'));
      return fetch(input, init);
    },
    ...more,
  });
  const done = command.parseAsync(['tail', '--url', t.url!, ...args], { from: 'user' });
  return {
    lines,
    errors,
    openings,
    versions,
    /** Resolves once `count` lines were printed; rejects after 8 s. */
    printed: async (count: number) => {
      for (const deadline = Date.now() + 8_000; lines.length < count;) {
        if (Date.now() > deadline || code !== undefined) throw new Error(`printed ${lines.join('\n')}\n${errors}`);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    },
    /** Ctrl-C; the exit code. */
    stop: async () => {
      interrupt.abort();
      await done;
      return code;
    },
    exited: async () => (await done, code),
  };
}

describe('petstore events tail', () => {
  it('prints a line per event as it comes, resumes across a drop with none missed or repeated, exits 0 on Ctrl-C', async () => {
    const key = await keyWithOrder();
    const [placed] = await listed(key);
    // The service drops the first stream after its next event; the second is followed.
    const steps = [
      { match: 'GET /events/stream', answer: 'drop' },
      { match: 'GET /events/stream', answer: 'pass' },
    ];
    const armed = await t.request({ method: 'PUT', url: '/test-scenario', headers: as(key), payload: { steps } });
    expect(armed.statusCode, armed.body).toBe(200);
    const run = tail(['--key', key, '--after', placed!.id]);
    await run.printed(1);
    await order(key);
    await run.printed(3);
    expect(await run.stop()).toBe(0);
    const events = (await listed(key)).slice(1);
    expect(run.lines).toEqual(
      events.map((event) => `${event.timestamp} ${event.type} ${event.id} order ${event.data.id}`),
    );
    expect(run.lines[0]).toMatch(/^\d{4}-\d\d-\d\dT[\d:.]+Z order\.approved evt_\w+ order \d+$/);
    expect(run.openings).toEqual([placed!.id, events[0]!.id]);
    // Pinned to the newest version, as the typed client pins its own.
    expect(run.versions).toEqual([NEWEST_VERSION, NEWEST_VERSION]);
    expect(run.errors).toEqual([
      `petstore events tail: the stream ended; resuming after ${events[0]!.id} once its retry has passed`,
    ]);
  });

  it('waits out a 429 on opening, then follows', async () => {
    const key = await keyWithOrder();
    const [placed] = await listed(key);
    const steps = [{ match: 'GET /events/stream', answer: '429' }];
    expect(
      (await t.request({ method: 'PUT', url: '/test-scenario', headers: as(key), payload: { steps } })).statusCode,
    ).toBe(200);
    const run = tail(['--key', key, '--after', placed!.id]);
    await run.printed(1);
    expect(await run.stop()).toBe(0);
    expect(run.openings).toEqual([placed!.id, placed!.id]);
  });

  it('--json prints each event as the stream carried it; --type keeps those types only', async () => {
    const key = await keyWithOrder();
    const [placed] = await listed(key);
    const run = tail(['--key', key, '--after', placed!.id, '--json', '--type', 'order.placed']);
    await order(key);
    await run.printed(1);
    expect(await run.stop()).toBe(0);
    const [, , again] = await listed(key);
    expect(run.lines.map((line) => JSON.parse(line) as Event)).toEqual([again]);
  });

  it('an --after the service does not keep: one line, never the key, exit code 1', async () => {
    const key = await keyWithOrder();
    const run = tail(['--key', key, '--after', 'evt_1a96fa337c6a71']);
    expect(await run.exited()).toBe(1);
    expect(run.lines).toEqual([]);
    expect(run.errors).toHaveLength(1);
    expect(run.errors[0]).toMatch(/^petstore events tail: http:\/\/127\.0\.0\.1:\d+ answered 400 event-id-unknown: /);
    expect(run.errors.join('')).not.toContain(key);
  });

  it('nothing listening: exit code 1 after its attempts; an unknown --type is a usage error', async () => {
    const run = tail(['--key', 'pet_test_x'], { fetch: () => Promise.reject(new TypeError('fetch failed')) });
    expect(await run.exited()).toBe(1);
    expect(run.errors).toEqual([`petstore events tail: could not reach ${t.url}: fetch failed`]);
    const usage = await cli(['events', 'tail', '--url', t.url!, '--key', 'pet_x', '--type', 'order.lost'], {});
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain('expected one of order.placed');
  });
});
