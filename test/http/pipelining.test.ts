import { connect, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLOSE_ABOVE, FLOOD_REFUSAL_MS, PAUSE_AT } from '../../src/http/pipelining.js';
import { MemoryLimiterStore } from '../../src/ratelimit/memory-store.js';
import type { Policy } from '../../src/ratelimit/plans.js';
import type { LimiterStore } from '../../src/ratelimit/store.js';
import type { Verdict } from '../../src/ratelimit/verdict.js';
import { type TestApp, testApp } from '../helpers/app.js';

/**
 * What one connection can make the service hold is bounded: with `PAUSE_AT` requests unanswered it is
 * not read (what the client sends next waits in its socket), and one that sends more than
 * `CLOSE_ABOVE` at once is closed, and its address is refused connections for a while. Over a real
 * socket; `/pets/1` answers from memory, `/pets/1?` (a query) is validated as one.
 */

let t: TestApp;
let port: number;
let key: string;
beforeAll(async () => {
  t = await testApp();
  key = await t.newKey('pro');
  port = Number(new URL(await t.app.listen({ host: '127.0.0.1', port: 0 })).port);
});
afterAll(async () => t.close());

/** The address the floods come from, so that the others' connections stay welcome. */
const FLOODER = '127.0.0.2';
const get = (path: string, extra = '') => `GET ${path} HTTP/1.1\r\nHost: x\r\nX-API-Key: ${key}\r\n${extra}\r\n`;

/** A connection that keeps what it reads; `ended` once the server closed or reset it. */
function open(to = port, from?: string): { socket: Socket; received: () => string; ended: Promise<void> } {
  const socket = connect({ port: to, host: '127.0.0.1', localAddress: from });
  let text = '';
  socket.on('data', (chunk) => (text += chunk.toString()));
  const ended = new Promise<void>((resolve) => socket.on('close', () => resolve()));
  socket.on('error', () => {});
  return { socket, received: () => text, ended };
}

/** Status lines: an answer follows the previous body directly, not on a line of its own. */
const statuses = (text: string) => [...text.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => Number(m[1]));

async function until(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

async function closedByPipelining(): Promise<number> {
  const metric = await t.metrics.registry.getSingleMetric('petstore_http_connections_closed_total')!.get();
  return metric.values.find((v) => v.labels.reason === 'pipelining')?.value ?? 0;
}

/** The memory limiter, holding every decision until `release`; `seen` counts the decisions it was asked. */
class HeldLimiter implements LimiterStore {
  seen = 0;
  readonly #memory = new MemoryLimiterStore({ clock: () => Date.now() });
  #holding = true;
  readonly #waiting: (() => void)[] = [];
  hitNow(): undefined {
    return undefined;
  }
  async hit(caller: string, policy: Policy, unbanSeq?: number): Promise<Verdict> {
    this.seen++;
    if (this.#holding) await new Promise<void>((resolve) => this.#waiting.push(resolve));
    return this.#memory.hitNow(caller, policy, unbanSeq);
  }
  release(): void {
    this.#holding = false;
    for (const resolve of this.#waiting.splice(0)) resolve();
  }
  refuse = (caller: string, policy: Policy, unbanSeq?: number) => this.#memory.refuse(caller, policy, unbanSeq);
  peek = (caller: string, policy: Policy, unbanSeq?: number) => this.#memory.peek(caller, policy, unbanSeq);
  unban = (caller: string) => this.#memory.unban(caller);
  banOf = (caller: string, unbanSeq?: number) => this.#memory.banOf(caller, unbanSeq);
  readonly stamps = false;
  forget = (caller: string) => this.#memory.forget(caller);
  restamp = () => this.#memory.restamp([]);
  close = () => this.#memory.close();
}

describe('pipelined requests on one connection', () => {
  it.each(['/pets/1', '/pets/1?'])('are all answered, in order, up to the most sent at once (%s)', async (path) => {
    await t.app.inject({ method: 'GET', url: '/pets/1', headers: { 'x-api-key': key } });
    const { socket, received } = open();
    socket.write(get(path).repeat(CLOSE_ABOVE - 1) + get('/pets/2', 'Connection: close\r\n'));
    await until(() => statuses(received()).length === CLOSE_ABOVE, `${CLOSE_ABOVE} answers`);
    expect(statuses(received())).toEqual(new Array(CLOSE_ABOVE).fill(200));
    expect(received().lastIndexOf('"id":2')).toBeGreaterThan(received().lastIndexOf('"id":1'));
  });

  it(`are not read beyond ${PAUSE_AT} unanswered: the next request waits in the client's socket until an answer is written`, async () => {
    // A limiter that holds every decision until released: the requests it has seen are the ones read.
    const limiter = new HeldLimiter();
    const held = await testApp({ limiter });
    try {
      const heldKey = await held.newKey('pro');
      const heldPort = Number(new URL(await held.app.listen({ host: '127.0.0.1', port: 0 })).port);
      const body = JSON.stringify({ petId: 1 });
      const place = `POST /store/orders HTTP/1.1\r\nHost: x\r\nX-API-Key: ${heldKey}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`;
      const orders = async () =>
        (await held.app.inject({ method: 'GET', url: '/store/orders', headers: { 'x-api-key': heldKey } })).json().data
          .length as number;
      const { socket, received, ended } = open(heldPort);
      socket.write(`GET /pets/1? HTTP/1.1\r\nHost: x\r\nX-API-Key: ${heldKey}\r\n\r\n`.repeat(PAUSE_AT));
      await until(() => limiter.seen === PAUSE_AT, `${PAUSE_AT} requests read`);
      // In a later read than the eight (one read is parsed whole): it must wait in the socket.
      socket.write(place);
      await sleep(300);
      expect(limiter.seen).toBe(PAUSE_AT);
      limiter.release();
      await ended;
      expect(statuses(received())).toEqual([...new Array(PAUSE_AT).fill(200), 201]);
      // The inject above counted through the limiter too, so the order is read after the release.
      expect(await orders()).toBe(1);
    } finally {
      await held.close();
    }
  });

  it(`are refused by closing the connection when more than ${CLOSE_ABOVE} come at once, counted; nothing of them is done`, async () => {
    const before = await closedByPipelining();
    const body = JSON.stringify({ petId: 1 });
    const place = `POST /store/orders HTTP/1.1\r\nHost: x\r\nX-API-Key: ${key}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`;
    const { socket, ended } = open(port, FLOODER);
    socket.write(get('/pets/1?').repeat(CLOSE_ABOVE) + place);
    await ended;
    expect(await closedByPipelining()).toBe(before + 1);
    expect(
      (await t.app.inject({ method: 'GET', url: '/store/orders', headers: { 'x-api-key': key } })).json().data,
    ).toEqual([]);
    // Another address is answered as ever.
    const next = open();
    next.socket.write(get('/pets/1', 'Connection: close\r\n'));
    await next.ended;
    expect(statuses(next.received())).toEqual([200]);
    t.clock.advance(FLOOD_REFUSAL_MS);
  });

  it("close the flooding address's other connections, and refuse its new ones for a while with a 429 problem", async () => {
    const idle = open(port, FLOODER);
    await new Promise((resolve) => idle.socket.once('connect', resolve));
    const flood = open(port, FLOODER);
    flood.socket.write(get('/pets/1').repeat(CLOSE_ABOVE + 1));
    await Promise.all([flood.ended, idle.ended]);

    t.clock.advance(FLOOD_REFUSAL_MS - 2_500);
    const refused = open(port, FLOODER);
    refused.socket.write(get('/pets/1'));
    await refused.ended;
    const [head = '', body = ''] = refused.received().split('\r\n\r\n');
    expect(statuses(head)).toEqual([429]);
    expect(head).toMatch(/\r\nRetry-After: 3\r\n/i);
    expect(head).toMatch(/\r\nX-RateLimit-Limit: \d+\r\n/i);
    expect(JSON.parse(body)).toMatchObject({ type: 'http://petstore.test/problems/pipelining-flood', status: 429 });

    t.clock.advance(2_500);
    const again = open(port, FLOODER);
    again.socket.write(get('/pets/1', 'Connection: close\r\n'));
    await again.ended;
    expect(statuses(again.received())).toEqual([200]);
  });
});
