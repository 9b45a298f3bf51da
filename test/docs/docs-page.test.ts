import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumInstalled, launchChromium } from '../helpers/browser.js';
import { startServer, tempDir, type Server } from '../helpers/process.js';

const SUNSET = '2031-03-15T00:00:00Z';
const KEY_LINE = /^ {2}free +(pet_[A-Za-z0-9_-]{32})$/m;

/** Operation ids of the page (`operations-<tag>-<operationId>`) by navigation group. */
const GROUPS = { Pets: ['listPets', 'getPet'], Store: ['listOrders', 'placeOrder', 'getOrder', 'cancelOrder'] };
const STABILITY: Record<string, string> = { listPets: 'beta', placeOrder: 'beta', getOrder: 'experimental', cancelOrder: 'experimental' };

describe.skipIf(!chromiumInstalled())('/docs in a real browser', () => {
  let server: Server;
  let browser: Browser;
  let page: Page;
  let key: string;
  const outside: string[] = [];

  beforeAll(async () => {
    server = await startServer({ DATABASE_URL: join(tempDir(), 'p.db'), PETS_GET_SUNSET_AT: SUNSET });
    key = KEY_LINE.exec(server.output())![1]!;
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 1400 } });
    page.on('request', (request) => {
      const url = new URL(request.url());
      if (url.protocol !== 'data:' && !['127.0.0.1', 'localhost'].includes(url.hostname)) outside.push(request.url());
    });
    // The document's server is PUBLIC_URL (http://localhost:<port> by default): open the page there, same origin.
    await page.goto(`${server.url.replace('127.0.0.1', 'localhost')}/docs`);
    await page.locator('.opblock').first().waitFor();
  });
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  const operation = (id: string) => page.locator(`.opblock[id$="-${id}"]`);

  it('shows the navigation groups Pets and Store holding their operations', async () => {
    expect(await page.locator('.petstore-group__title').allTextContents()).toEqual(['Pets', 'Store']);
    for (const [group, ids] of Object.entries(GROUPS)) {
      const inGroup = await page.locator(`.petstore-group[data-group="${group}"] .opblock`).evaluateAll((els) => els.map((e) => e.id.replace(/^operations-[^-]+-/, '')));
      expect(inGroup).toEqual(ids);
    }
  });

  it('puts a stability badge on each beta and experimental operation, and on no other', async () => {
    for (const id of Object.values(GROUPS).flat()) {
      const badge = operation(id).locator('.petstore-badge[data-stability]');
      if (STABILITY[id]) expect(await badge.textContent(), id).toBe(STABILITY[id]);
      else expect(await badge.count(), id).toBe(0);
    }
  });

  it('shows GET /pets/{petId} as deprecated with its sunset date', async () => {
    const getPet = operation('getPet');
    expect(await getPet.getAttribute('class')).toContain('opblock-deprecated');
    expect(await getPet.locator('.petstore-badge--deprecated').textContent()).toBe('deprecated · sunset 2031-03-15');
  });

  it('offers try-it on every operation except GET /store/orders', async () => {
    for (const id of Object.values(GROUPS).flat()) {
      const op = operation(id);
      await op.locator('.opblock-summary').first().click();
      // The parameters' header is where Swagger UI puts "Try it out": wait until it is drawn.
      await op.locator('.opblock-body .opblock-section-header').first().waitFor();
      expect(await op.locator('.try-out__btn').count(), id).toBe(id === 'listOrders' ? 0 : 1);
      await op.locator('.opblock-summary').first().click();
    }
  });

  it('sends a real request with an API key and shows the response with its rate-limit headers', async () => {
    await page.locator('.auth-wrapper .authorize').click();
    await page.locator('.modal-ux input[type="text"]').fill(key);
    await page.locator('.modal-ux .auth-btn-wrapper .authorize').click();
    await page.locator('.modal-ux .btn-done').click();

    const listPets = operation('listPets');
    await listPets.locator('.opblock-summary').first().click();
    await listPets.locator('.try-out__btn').click();
    await listPets.locator('.execute').click();
    const live = listPets.locator('.live-responses-table');
    const status = live.locator('tr.response .response-col_status');
    await status.waitFor();
    expect((await status.textContent())?.trim()).toBe('200');
    const shown = (await live.textContent()) ?? '';
    expect(shown).toMatch(/x-ratelimit-limit:\s*60/);
    expect(shown).toMatch(/x-ratelimit-remaining:\s*59/);
    expect(shown).toMatch(/x-ratelimit-reset:\s*\d+/);
    expect(shown).toContain('"data"');
  });

  it('requests nothing outside localhost', () => {
    expect(outside).toEqual([]);
  });
});
