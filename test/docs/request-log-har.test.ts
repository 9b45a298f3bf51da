import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NEWEST_VERSION } from '../../src/versions/versions.js';
import { chromiumInstalled, launchChromium } from '../helpers/browser.js';
import { demoKey, type Server, startServer, tempDir } from '../helpers/process.js';

/**
 * The request log's HAR (docs/request-log.md#har) read by a reader no one here wrote: Playwright's HAR router
 * (`routeFromHAR`). A test key's exchanges are exported, the service is stopped, and a page in a browser of its own
 * asks the same URLs again: only the HAR can answer, with the statuses and bodies the service sent.
 */

interface Exchange {
  method: string;
  url: string;
  body?: string;
  status: number;
  text: string;
  requestId: string | null;
}

describe.skipIf(!chromiumInstalled())("routeFromHAR replays the request log's export", { timeout: 60_000 }, () => {
  let server: Server;
  let browser: Browser;
  let origin: string;
  let har: string;
  let recorded: { request: { method: string; url: string } }[];
  const sent: Exchange[] = [];

  beforeAll(async () => {
    server = await startServer({ DATABASE_URL: join(tempDir(), 'p.db') });
    // The export names each URL on PUBLIC_URL: by default http://localhost and the port.
    origin = server.url.replace('127.0.0.1', 'localhost');
    const key = demoKey(server, 'test');
    const send = async (method: string, url: string, body?: unknown): Promise<Exchange> => {
      const text = body === undefined ? undefined : JSON.stringify(body);
      const response = await fetch(`${server.url}${url}`, {
        method,
        headers: {
          'x-api-key': key,
          'petstore-version': NEWEST_VERSION,
          ...(text === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(text === undefined ? {} : { body: text }),
      });
      const exchange = {
        method,
        url,
        ...(text === undefined ? {} : { body: text }),
        status: response.status,
        text: await response.text(),
        requestId: response.headers.get('x-request-id'),
      };
      sent.push(exchange);
      return exchange;
    };
    const listed = await send('GET', '/pets?status=available&limit=2');
    const petId = (JSON.parse(listed.text) as { data: { id: number }[] }).data[0]!.id;
    await send('GET', `/pets/${petId}`);
    // As compact JSON: the router matches a POST by its body byte for byte, and the log keeps a JSON body as parsed,
    // then written again (src/request-log/stage.ts), not as its bytes came.
    await send('POST', '/store/orders', { petId, quantity: 1 });
    const exported = await fetch(`${server.url}/request-log.har`, { headers: { 'x-api-key': key } });
    expect(exported.status).toBe(200);
    har = join(tempDir(), 'petstore.har');
    const text = await exported.text();
    recorded = (JSON.parse(text) as { log: { entries: typeof recorded } }).log.entries;
    writeFileSync(har, text);
    await server.stop();
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  it('answers each request from the HAR, with its recorded status and body, the service stopped', async () => {
    expect(sent.map(({ method, url, status }) => `${method} ${url} ${status}`)).toEqual([
      'GET /pets?status=available&limit=2 200',
      expect.stringMatching(/^GET \/pets\/\d+ 200$/),
      'POST /store/orders 201',
    ]);
    // The export holds those three, each on PUBLIC_URL; the service answers nothing now.
    expect(recorded.map(({ request }) => `${request.method} ${request.url}`).sort()).toEqual(
      sent.map(({ method, url }) => `${method} ${origin}${url}`).sort(),
    );
    await expect(fetch(`${server.url}/pets/1`)).rejects.toThrow('fetch failed');
    const context = await browser.newContext();
    await context.routeFromHAR(har, { notFound: 'abort' });
    const page = await context.newPage();
    // A blank page on the service's origin, so that its requests are the client's own (no CORS preflight): from the
    // page's route, not the HAR, which holds no such page.
    await page.route(`${origin}/`, (route) => route.fulfill({ contentType: 'text/html', body: '<!doctype html>' }));
    await page.goto(`${origin}/`);

    const replayed = await page.evaluate(
      (requests) =>
        Promise.all(
          requests.map(async ({ method, url, body }) => {
            const response = await fetch(url, {
              method,
              ...(body === undefined ? {} : { body, headers: { 'content-type': 'application/json' } }),
            });
            return {
              method,
              url,
              ...(body === undefined ? {} : { body }),
              status: response.status,
              text: await response.text(),
              requestId: response.headers.get('x-request-id'),
            };
          }),
        ),
      sent.map(({ method, url, body }) => ({ method, url, ...(body === undefined ? {} : { body }) })),
    );
    expect(replayed).toEqual(sent);

    // What the HAR does not hold is aborted: nothing else answers.
    const unrecorded = await page.evaluate(() =>
      fetch('/pets?limit=3').then(
        (response) => `answered ${response.status}`,
        (error: unknown) => String(error),
      ),
    );
    expect(unrecorded).toBe('TypeError: Failed to fetch');
    await context.close();
  });
});
