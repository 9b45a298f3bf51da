import { join } from 'node:path';
import type { Browser, Page, Response } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHECK_IDS } from '../../src/report-card/checks.js';
import { apiKeyForm, chromiumInstalled, launchChromium } from '../helpers/browser.js';
import { demoKey, type Server, startServer, tempDir } from '../helpers/process.js';

/** The marks' colours (src/docs/interactive.ts): green, red, grey. */
const MARK = { passed: 'rgb(26, 127, 55)', failed: 'rgb(207, 34, 46)', untested: 'rgb(140, 149, 159)' };

// The docs page's report card (docs/testing-clients.md#is-my-client-a-good-api-citizen): the authorised test key's,
// beside the meter, read again after every answer the page receives, with the key's latest requests from its request
// log (docs/request-log.md) below it. Its own suite, on a key of its own: the card and the log start empty.
describe.skipIf(!chromiumInstalled())("/docs shows the authorised test key's report card", { timeout: 60_000 }, () => {
  let server: Server;
  let browser: Browser;
  let page: Page;
  const cardReads: string[] = [];
  const logReads: string[] = [];
  /** The page's two GET /pets answering 503: the first opens the check's situation, the second fails it. */
  let first: Response;
  let repeat: Response;

  beforeAll(async () => {
    server = await startServer({ DATABASE_URL: join(tempDir(), 'p.db') });
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 1400 } });
    page.on('request', (request) => {
      const { pathname } = new URL(request.url());
      if (pathname === '/report-card') cardReads.push(request.method());
      if (pathname.startsWith('/request-log')) logReads.push(pathname);
    });
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
  const log = () => page.locator('#petstore-log');
  /** The list's rows, newest first: what each shows. */
  const listed = () =>
    log()
      .locator('.petstore-log__entry')
      .evaluateAll((rows) =>
        rows.map((row) => ({
          requestId: row.getAttribute('data-request-id'),
          method: row.querySelector('.petstore-log__method')?.textContent,
          url: row.querySelector('.petstore-log__url')?.textContent,
          status: row.querySelector('.petstore-log__status')?.textContent,
          checks: [...row.querySelectorAll('.petstore-log__check')].map((check) => check.textContent),
        })),
      );
  /** What the page sent: its path and query. */
  const sentUrl = (response: Response) => {
    const { pathname, search } = new URL(response.url());
    return pathname + search;
  };
  const markColour = (id: string) =>
    check(id)
      .locator('.petstore-card__mark')
      .evaluate((mark) => getComputedStyle(mark).backgroundColor);

  async function authorise(key: string) {
    await page.locator('.auth-wrapper .authorize').click();
    const logout = apiKeyForm(page).locator('.auth-btn-wrapper button', { hasText: 'Logout' });
    if (await logout.count()) await logout.click();
    await apiKeyForm(page).locator('#api_key_value').fill(key);
    await apiKeyForm(page).locator('.auth-btn-wrapper .authorize').click();
    await apiKeyForm(page).locator('.btn-done').click();
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
    await log().waitFor();
    expect(await log().locator('#petstore-log-title').textContent()).toContain("Your test key's latest requests");
    expect(await log().locator('.petstore-log__empty').textContent()).toBe(
      'None yet: each request of your test key shows here.',
    );
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
    first = await listPets();
    expect(first.status()).toBe(503);
    await page.waitForFunction(
      () =>
        document.querySelector('#petstore-card [data-check="honours-retry-after"]')?.getAttribute('data-status') ===
        'passed',
    );
    expect(await markColour('honours-retry-after')).toBe(MARK.passed);
    repeat = await listPets();
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
      /^2 requests graded since .+ UTC: 1 failed, 1 passed, 11 untested$/,
    );
  });

  it("lists the key's latest requests below the card: method, URL, status and the checks each touched", async () => {
    const latest = await repeat.headerValue('x-request-id');
    await page.waitForFunction(
      (id) => document.querySelector('#petstore-log .petstore-log__entry')?.getAttribute('data-request-id') === id,
      latest,
    );
    expect(await listed()).toEqual([
      {
        requestId: latest,
        method: 'GET',
        url: sentUrl(repeat),
        status: '503',
        checks: ['honours-retry-after failed', 'pins-version passed'],
      },
      {
        requestId: await first.headerValue('x-request-id'),
        method: 'GET',
        url: sentUrl(first),
        status: '503',
        checks: ['honours-retry-after started', 'pins-version passed'],
      },
    ]);
    // A row opens its exchange, from the list's own read.
    const row = log().locator('.petstore-log__entry').first();
    await row.locator('button.petstore-log__row').click();
    expect(await row.locator('button.petstore-log__row').getAttribute('aria-expanded')).toBe('true');
    expect(await row.locator('.petstore-exchange__id').textContent()).toBe(latest);
    expect((await row.locator('.petstore-exchange__response').textContent())?.split('\n')[0]).toBe('HTTP 503');
    await row.locator('button.petstore-log__row').click();
    expect(await row.locator('.petstore-exchange').count()).toBe(0);
  });

  it("opens a failure's exchange from the card: the request and the answer, headers and bodies", async () => {
    const latest = (await repeat.headerValue('x-request-id'))!;
    const failure = check('honours-retry-after').locator('.petstore-card__failure');
    const open = failure.locator('button.petstore-card__exchange');
    expect(await open.getAttribute('aria-expanded')).toBe('false');
    const read = page.waitForRequest((request) => new URL(request.url()).pathname === `/request-log/${latest}`);
    await open.click();
    // Read with the authorised key, from the failure's `log` link.
    expect((await read).headers()['x-api-key'] === demoKey(server, 'test')).toBe(true);
    const shown = failure.locator('.petstore-exchange');
    await shown.waitFor();
    expect(await open.getAttribute('aria-expanded')).toBe('true');
    expect([
      await shown.locator('.petstore-exchange__id').textContent(),
      await shown.getAttribute('data-status'),
    ]).toEqual([latest, '503']);
    const request = (await shown.locator('.petstore-exchange__request').textContent())!.split('\n');
    expect(request[0]).toBe(`GET ${sentUrl(repeat)}`);
    expect(request).toContain('prefer: fault=503');
    // The key as the log shows it: its first 8 characters.
    expect(request).toContain('x-api-key: pet_test…');
    const response = (await shown.locator('.petstore-exchange__response').textContent())!;
    expect(response.split('\n')).toEqual(
      expect.arrayContaining([
        'HTTP 503',
        `x-request-id: ${latest}`,
        `retry-after: ${await repeat.headerValue('retry-after')}`,
      ]),
    );
    // The body as the page received it, indented.
    expect(response).toContain(JSON.stringify(await repeat.json(), null, 2));
    await open.click();
    expect([await open.getAttribute('aria-expanded'), await shown.count()]).toEqual(['false', 0]);
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

  it('is hidden for a live key, and so is the list', async () => {
    const reads = cardReads.length;
    const logged = logReads.length;
    await authorise(demoKey(server, 'free'));
    await card().waitFor({ state: 'hidden' });
    expect(await log().isHidden()).toBe(true);
    await page.locator('.opblock[id$="-listPets"] tr[data-param-name="Prefer"] input').fill('');
    expect((await listPets()).status()).toBe(200);
    expect([await card().isHidden(), await log().isHidden()]).toEqual([true, true]);
    expect([cardReads.length, logReads.length]).toEqual([reads, logged]);
  });
});
