import { join } from 'node:path';
import type { Browser, Page, Response } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHECK_IDS } from '../../src/report-card/checks.js';
import { chromiumInstalled, launchChromium } from '../helpers/browser.js';
import { demoKey, type Server, startServer, tempDir } from '../helpers/process.js';

/** The marks' colours (src/docs/interactive.ts): green, red, grey. */
const MARK = { passed: 'rgb(26, 127, 55)', failed: 'rgb(207, 34, 46)', untested: 'rgb(140, 149, 159)' };

// The docs page's report card (docs/testing-clients.md#is-my-client-a-good-api-citizen): the authorised test key's,
// beside the meter, read again after every answer the page receives. Its own suite, on a key of its own: the card
// starts empty.
describe.skipIf(!chromiumInstalled())("/docs shows the authorised test key's report card", { timeout: 60_000 }, () => {
  let server: Server;
  let browser: Browser;
  let page: Page;
  const cardReads: string[] = [];

  beforeAll(async () => {
    server = await startServer({ DATABASE_URL: join(tempDir(), 'p.db') });
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 1400 } });
    page.on(
      'request',
      (request) => void (new URL(request.url()).pathname === '/report-card' && cardReads.push(request.method())),
    );
    await page.goto(`${server.url.replace('127.0.0.1', 'localhost')}/docs`);
    await page.locator('.opblock').first().waitFor();
  });
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  const card = () => page.locator('#petstore-card');
  const check = (id: string) => card().locator(`[data-check="${id}"]`);
  const statusOf = (id: string) => check(id).getAttribute('data-status');
  const markColour = (id: string) =>
    check(id)
      .locator('.petstore-card__mark')
      .evaluate((mark) => getComputedStyle(mark).backgroundColor);

  async function authorise(key: string) {
    await page.locator('.auth-wrapper .authorize').click();
    const logout = page.locator('.modal-ux .auth-btn-wrapper button', { hasText: 'Logout' });
    if (await logout.count()) await logout.click();
    await page.locator('.modal-ux input[type="text"]').fill(key);
    await page.locator('.modal-ux .auth-btn-wrapper .authorize').click();
    await page.locator('.modal-ux .btn-done').click();
  }

  /** Execute on GET /pets: its answer (a click Swagger UI drops while it still draws is made again). */
  async function listPets(): Promise<Response> {
    const execute = page.locator('.opblock[id$="-listPets"] .execute');
    for (let clicks = 0; ; clicks++) {
      const answer = page.waitForResponse((response) => new URL(response.url()).pathname === '/pets', {
        timeout: 5_000,
      });
      await execute.click();
      const response = await answer.catch((error: unknown) => (clicks < 3 ? undefined : Promise.reject(error)));
      if (response) return response;
    }
  }

  it('is hidden until a key is authorised, then lists every check of a test key, untested and grey', async () => {
    expect(await card().isHidden()).toBe(true);
    await authorise(demoKey(server, 'test'));
    await card().waitFor();
    expect(await card().getAttribute('data-requests')).toBe('0');
    expect(
      await card()
        .locator('[data-check]')
        .evaluateAll((rows) => rows.map((row) => row.getAttribute('data-check'))),
    ).toEqual([...CHECK_IDS]);
    expect(await card().locator('.petstore-card__status').allTextContents()).toEqual(CHECK_IDS.map(() => 'untested'));
    expect(await markColour('webhook-receiver')).toBe(MARK.untested);
  });

  it('turns a check red when a request from the page fails it, and shows that failure on a click', async () => {
    const listPetsBlock = page.locator('.opblock[id$="-listPets"]');
    await listPetsBlock.locator('.opblock-summary').first().click();
    await listPetsBlock.locator('.try-out__btn').click();
    // A 503 with Retry-After, then the same request again before it elapsed (the key's clock stands
    // still: however slow the page, no wait is long enough): honours-retry-after goes wrong.
    const frozen = await fetch(`${server.url}/test-clock/freeze`, {
      method: 'POST',
      headers: { 'x-api-key': demoKey(server, 'test') },
    });
    expect(frozen.status).toBe(200);
    await listPetsBlock.locator('tr[data-param-name="Prefer"] input').fill('fault=503');
    expect((await listPets()).status()).toBe(503);
    await page.waitForFunction(
      () =>
        document.querySelector('#petstore-card [data-check="honours-retry-after"]')?.getAttribute('data-status') ===
        'passed',
    );
    expect(await markColour('honours-retry-after')).toBe(MARK.passed);
    const repeat = await listPets();
    expect(repeat.status()).toBe(503);
    await page.waitForFunction(
      () =>
        document.querySelector('#petstore-card [data-check="honours-retry-after"]')?.getAttribute('data-status') ===
        'failed',
    );
    const row = check('honours-retry-after');
    expect(await row.locator('.petstore-card__status').textContent()).toBe('failed');
    expect(await row.getAttribute('class')).toContain('petstore-card__check--failed');
    expect(await markColour('honours-retry-after')).toBe(MARK.failed);
    expect(await row.locator('.petstore-card__counts').textContent()).toBe('seen 2 · failed 1');

    const toggle = row.locator('button.petstore-card__row');
    expect(await toggle.getAttribute('aria-expanded')).toBe('false');
    expect(await row.locator('.petstore-card__failure').isHidden()).toBe(true);
    await toggle.click();
    expect(await toggle.getAttribute('aria-expanded')).toBe('true');
    expect(await row.locator('.petstore-card__detail').textContent()).toMatch(
      /^repeated [\d.]+ s after a 503; Retry-After said \d+$/,
    );
    expect(await row.locator('.petstore-card__request').textContent()).toBe(await repeat.headerValue('x-request-id'));
    expect(await row.locator('.petstore-card__failure a').getAttribute('href')).toMatch(
      /\/checks\/honours-retry-after$/,
    );

    // The page's own requests carry Petstore-Version: that check passed, green; one never met stays grey.
    expect([await statusOf('pins-version'), await markColour('pins-version')]).toEqual(['passed', MARK.passed]);
    expect([await statusOf('webhook-receiver'), await markColour('webhook-receiver')]).toEqual([
      'untested',
      MARK.untested,
    ]);
    expect(await card().locator('.petstore-card__since').textContent()).toMatch(
      /^2 requests graded since .+ UTC: 1 failed, 1 passed, 8 untested$/,
    );
  });

  it('folds to its summary line, and unfolds, on its title', async () => {
    const fold = card().locator('button[data-card="fold"]');
    await fold.click();
    expect([
      await fold.getAttribute('aria-expanded'),
      await card().locator('.petstore-card__checks').isHidden(),
    ]).toEqual(['false', true]);
    expect(await card().locator('.petstore-card__since').isVisible()).toBe(true);
    await fold.click();
    expect([
      await fold.getAttribute('aria-expanded'),
      await check('honours-retry-after').locator('.petstore-card__failure').isVisible(),
    ]).toEqual(['true', true]);
  });

  it("reads the card once or twice per answer, never on its own reads' account", async () => {
    const settled = cardReads.length;
    await page.waitForTimeout(1_500);
    expect(cardReads.length).toBe(settled);
    expect(cardReads.filter((method) => method === 'GET').length).toBeLessThanOrEqual(1 + 2 * 2);
  });

  it('starts over on "Start over": every check untested again', async () => {
    await card().locator('button[data-card="start-over"]').click();
    await page.waitForFunction(() => document.querySelector('#petstore-card')?.getAttribute('data-requests') === '0');
    expect(cardReads.at(-1)).toBe('DELETE');
    expect(await card().locator('.petstore-card__status').allTextContents()).toEqual(CHECK_IDS.map(() => 'untested'));
  });

  it('is hidden for a live key', async () => {
    const reads = cardReads.length;
    await authorise(demoKey(server, 'free'));
    await card().waitFor({ state: 'hidden' });
    await page.locator('.opblock[id$="-listPets"] tr[data-param-name="Prefer"] input').fill('');
    expect((await listPets()).status()).toBe(200);
    expect(await card().isHidden()).toBe(true);
    expect(cardReads.length).toBe(reads);
  });
});
