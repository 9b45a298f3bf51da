import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NEWEST_VERSION } from '../../src/versions/versions.js';
import { json, type TestApp, testApp } from '../helpers/app.js';
import { type OpenedStream, openStream } from '../helpers/sse.js';
import { client, failedAt, passed } from './graded-client.js';

/**
 * `resumes-streams` (docs/testing-clients.md#is-my-client-a-good-api-citizen): after the service ends a stream, the
 * key's next one opens no sooner than `retry`, in its time, and resumes after the last event sent. And the request
 * log's word on how each stream ended (docs/request-log.md).
 */

let t: TestApp;
const opened: OpenedStream[] = [];

beforeAll(async () => {
  t = await testApp({ overSocket: true });
});
afterAll(async () => {
  for (const s of opened) s.close();
  await t.close();
});

/** A graded test key that follows its events, with the request ids it sends. */
async function follower() {
  const c = await client(t, 'pro');
  let n = 0;
  const open = async (headers: Record<string, string> = {}) => {
    const id = `stream-${++n}`;
    const s = await openStream(`${t.url}/events/stream`, {
      'x-api-key': c.key,
      'x-request-id': id,
      'petstore-version': NEWEST_VERSION,
      ...headers,
    });
    opened.push(s);
    expect(s.status).toBe(200);
    expect(await s.next()).toEqual({ retry: '3000' });
    return Object.assign(s, { id });
  };
  const place = async () =>
    expect((await c.send('/store/orders', { method: 'POST', payload: { petId: 1, quantity: 1 } })).statusCode).toBe(
      201,
    );
  /** A stream dropped after its first event: that event's id. */
  const dropped = async () => {
    const s = await open({ prefer: 'fault=drop' });
    await place();
    const [event] = await s.events(1);
    expect(await s.next()).toBeUndefined();
    return event!.id!;
  };
  return { ...c, open, place, dropped };
}

describe('resumes-streams', () => {
  it('is untested until the service ends a stream: a client that closes its own tests nothing', async () => {
    const c = await follower();
    const s = await c.open();
    s.close();
    await c.open();
    expect(await c.check('resumes-streams')).toMatchObject({ status: 'untested', seen: 0 });
  });

  it('fails a reconnection at once, though it sends the last id', async () => {
    const c = await follower();
    const last = await c.dropped();
    const again = await c.open({ 'last-event-id': last });
    failedAt(
      await c.check('resumes-streams'),
      again.id,
      /^the event stream reopened 0 s after the service ended it; retry said 3 s$/,
    );
  });

  it('fails a reconnection after retry without Last-Event-ID, naming the id it should have sent', async () => {
    const c = await follower();
    const last = await c.dropped();
    await c.advance(3);
    const again = await c.open();
    failedAt(
      await c.check('resumes-streams'),
      again.id,
      new RegExp(`^the event stream reopened without Last-Event-ID; the last event sent on it was ${last}$`),
    );
  });

  it('passes a reconnection after retry (its test clock moved, as a wait) with the last id, and ?after= too', async () => {
    const c = await follower();
    const last = await c.dropped();
    await c.advance(3);
    await c.open({ 'last-event-id': last });
    passed(await c.check('resumes-streams'));
    const next = await c.dropped();
    await c.advance(3);
    await openStream(`${t.url}/events/stream?after=${next}`, {
      'x-api-key': c.key,
      'petstore-version': NEWEST_VERSION,
    });
    passed(await c.check('resumes-streams'));
    expect((await c.check('resumes-streams')).seen).toBe(2);
  });
});

describe('the request log', () => {
  it('records a stream when it ends: dropped by the service or closed by the client, with what it sent', async () => {
    const c = await follower();
    await c.dropped();
    const kept = await c.open();
    await c.place();
    await kept.events(1);
    kept.close();
    let entries: { requestId: string; status: number; ending: string; fault?: object; responseBody?: string }[] = [];
    for (let tries = 0; tries < 250; tries++) {
      const log = await t.request({ url: '/request-log?path=/events/stream', headers: { 'x-api-key': c.key } });
      entries = json<{ data: typeof entries }>(log).data;
      if (entries.length === 2) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const [closed, dropped] = entries;
    expect(dropped).toMatchObject({ requestId: 'stream-1', status: 200, ending: 'dropped' });
    expect(dropped!.fault).toMatchObject({ fault: 'drop', by: 'Prefer: fault=drop' });
    expect(closed).toMatchObject({ requestId: 'stream-2', status: 200, ending: 'closed' });
    for (const entry of [closed!, dropped!]) {
      expect(entry.responseBody).toMatch(/^retry: 3000\n\nid: evt_\w+\nevent: order\.placed\ndata: \{/);
    }
  });
});
