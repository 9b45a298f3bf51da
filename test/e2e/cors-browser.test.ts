/** CORS as a browser applies it: a page of another origin calls the API and reads what it answers. */
import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumInstalled, launchChromium } from '../helpers/browser.js';
import { demoKey, type Server, startServer, tempDir } from '../helpers/process.js';

/** What a script sees of one answer, and the names of the headers that came over the network. */
interface Seen {
  status: number;
  readable: Record<string, string>;
  sent: string[];
}

/** Headers every server writes, which a script never needs: the connection's and the body's framing. */
const FRAMING = new Set(['connection', 'keep-alive', 'content-length', 'date']);

describe.skipIf(!chromiumInstalled())('CORS in a real browser, from a page of another origin', () => {
  let server: Server;
  let origin: HttpServer;
  let browser: Browser;
  let page: Page;
  let key: string;

  beforeAll(async () => {
    server = await startServer({ DATABASE_URL: join(tempDir(), 'p.db') });
    key = demoKey(server, 'free');
    // The other origin: another port of the loopback address serves the page that calls the API.
    origin = createServer((_request, response) =>
      response.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>client</title>'),
    );
    await new Promise<void>((resolve) => origin.listen(0, '127.0.0.1', resolve));
    browser = await launchChromium();
    page = await browser.newPage();
    await page.goto(`http://127.0.0.1:${(origin.address() as AddressInfo).port}/`);
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    origin?.close();
    await server?.stop();
  });

  /** `fetch` from the page, with the names of the headers the network brought for that request. */
  async function call(
    path: string,
    init: { method?: string; headers?: Record<string, string>; body?: string },
  ): Promise<Seen> {
    const url = `${server.url}${path}`;
    const [network, readable] = await Promise.all([
      page.waitForResponse(
        (response) => response.url() === url && response.request().method() === (init.method ?? 'GET'),
      ),
      page.evaluate(
        async ([url, init]) => {
          const response = await fetch(url, { ...init, cache: 'no-store' });
          return { status: response.status, headers: Object.fromEntries(response.headers) };
        },
        [url, init] as const,
      ),
    ]);
    const sent = Object.keys(await network.allHeaders()).filter((name) => !FRAMING.has(name));
    return { status: readable.status, readable: readable.headers, sent };
  }

  /** Every header the service sent, but the framing, is one the script reads. */
  function expectAllReadable(seen: Seen): void {
    expect(seen.sent.length).toBeGreaterThan(3);
    for (const name of seen.sent) expect(seen.readable, name).toHaveProperty(name);
  }

  it('reads the rate-limit, deprecation, version, request-id and ETag headers, and revalidates with the ETag', async () => {
    const read = await call('/pets/1', { headers: { 'X-API-Key': key } });
    expect(read.status).toBe(200);
    expectAllReadable(read);
    for (const name of [
      'x-ratelimit-remaining',
      'ratelimit',
      'ratelimit-policy',
      'deprecation',
      'sunset',
      'link',
      'petstore-version',
      'x-request-id',
      'etag',
    ])
      expect(read.readable, name).toHaveProperty(name);
    const again = await call('/pets/1', { headers: { 'X-API-Key': key, 'If-None-Match': read.readable.etag! } });
    expect(again.status).toBe(304);
  });

  it('reads Location, and Idempotent-Replayed on a replay', async () => {
    const order = {
      method: 'POST',
      headers: { 'X-API-Key': key, 'Content-Type': 'application/json', 'Idempotency-Key': 'cors-1' },
      body: '{"petId":1}',
    };
    const placed = await call('/store/orders', order);
    expect(placed.status).toBe(201);
    expectAllReadable(placed);
    expect(placed.readable.location).toMatch(/\/store\/orders\/\d+$/);
    const replayed = await call('/store/orders', order);
    expect(replayed.readable['idempotent-replayed']).toBe('true');
  });

  it('reads Retry-After and Preference-Applied of a 429 a test key asked for', async () => {
    const testKey = demoKey(server, 'test');
    const refused = await call('/pets', { headers: { 'X-API-Key': testKey, Prefer: 'fault=429' } });
    expect(refused.status).toBe(429);
    expectAllReadable(refused);
    expect(refused.readable['retry-after']).toMatch(/^\d+$/);
    expect(refused.readable['preference-applied']).toBe('fault=429');
  });
});
