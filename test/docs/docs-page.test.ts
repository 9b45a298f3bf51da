import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NEWEST_VERSION, OLDEST_VERSION } from '../../src/versions/versions.js';
import { apiKeyForm, chromiumInstalled, launchChromium } from '../helpers/browser.js';
import { demoKey, type Server, startServer, tempDir } from '../helpers/process.js';

const SUNSET = '2031-03-15T00:00:00Z';

const WEBHOOK_OPERATIONS = [
  'createWebhookEndpoint',
  'listWebhookEndpoints',
  'getWebhookEndpoint',
  'updateWebhookEndpoint',
  'deleteWebhookEndpoint',
  'rotateWebhookSecret',
  'testWebhookEndpoint',
  'examWebhookEndpoint',
  'listWebhookDeliveries',
  'retryWebhookDelivery',
];

/** Operation ids of the page (`operations-<tag>-<operationId>`) by navigation group. */
const TEST_MODE_OPERATIONS = [
  'getTestClock',
  'advanceTestClock',
  'freezeTestClock',
  'resumeTestClock',
  'resetTestData',
  'createTestKey',
  'deleteTestKey',
  'armTestScenario',
  'getTestScenario',
  'disarmTestScenario',
  'getReportCard',
  'resetReportCard',
  'listRequestLog',
  'exportRequestLog',
  'getRequestLogEntry',
  'listScenarios',
];
const TOKEN_OPERATIONS = ['getAccessToken', 'getAuthorizationServerMetadata', 'getJsonWebKeySet'];
const GROUPS = {
  Pets: ['listPets', 'getPet'],
  Store: ['listOrders', 'placeOrder', 'getOrder', 'cancelOrder', 'advanceOrder'],
  Notifications: ['listEvents', 'streamEvents', 'getEvent', ...WEBHOOK_OPERATIONS],
  Account: ['getUsage', ...TOKEN_OPERATIONS, 'listVersions', ...TEST_MODE_OPERATIONS],
};
const STABILITY: Record<string, string> = {
  listPets: 'beta',
  placeOrder: 'beta',
  getOrder: 'experimental',
  cancelOrder: 'experimental',
  advanceOrder: 'experimental',
  listEvents: 'beta',
  streamEvents: 'beta',
  getEvent: 'beta',
  ...Object.fromEntries(WEBHOOK_OPERATIONS.map((id) => [id, 'experimental'])),
  getUsage: 'beta',
  ...Object.fromEntries(TOKEN_OPERATIONS.map((id) => [id, 'beta'])),
  listVersions: 'beta',
  ...Object.fromEntries(TEST_MODE_OPERATIONS.map((id) => [id, 'experimental'])),
};

// Chromium draws Swagger UI on the CPU, a second or more per operation opened on a busy two-core
// machine: each test may take a minute (what it asserts is what the page shows, not how fast).
describe.skipIf(!chromiumInstalled())('/docs in a real browser', { timeout: 60_000 }, () => {
  let server: Server;
  let browser: Browser;
  let page: Page;
  let key: string;
  const outside: string[] = [];

  beforeAll(async () => {
    server = await startServer({
      DATABASE_URL: join(tempDir(), 'p.db'),
      PETS_GET_SUNSET_AT: SUNSET,
      BAN_AFTER_REJECTIONS: '2',
    });
    key = demoKey(server, 'free');
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

  /** Counted requests with the page's key, sent from Node, until `left` remain in its minute: that number. */
  async function spendMinuteDownTo(left: number): Promise<number> {
    for (;;) {
      const response = await fetch(`${server.url}/store/orders/1`, { method: 'DELETE', headers: { 'x-api-key': key } });
      const remaining = Number(response.headers.get('x-ratelimit-remaining'));
      expect(response.status).toBe(404);
      if (remaining <= left) return remaining;
    }
  }

  it('shows the navigation groups Pets, Store, Notifications and Account holding their operations', async () => {
    expect(await page.locator('.petstore-group__title').allTextContents()).toEqual([
      'Pets',
      'Store',
      'Notifications',
      'Account',
    ]);
    // A group's heading stands over its first tag; each operation's id names its tag.
    const ids = await page
      .locator('.opblock[id^="operations-"]:not([id^="operations-webhooks-"])')
      .evaluateAll((els) => els.map((e) => e.id));
    for (const [group, operations] of Object.entries(GROUPS)) {
      const first = await page.locator(`.petstore-group[data-group="${group}"] .opblock`).first().getAttribute('id');
      expect(first, group).toBe(ids.find((id) => id.endsWith(`-${operations[0]}`)));
      expect(
        ids
          .filter((id) => operations.some((op) => id.endsWith(`-${op}`)))
          .map((id) => id.replace(/^operations-[^-]+-/, '')),
      ).toEqual(operations);
    }
    expect(ids.map((id) => id.replace(/^operations-[^-]+-/, ''))).toEqual(Object.values(GROUPS).flat());
  });

  it('puts a stability badge on each beta and experimental operation, and on no other', async () => {
    for (const id of Object.values(GROUPS).flat()) {
      const badge = operation(id).locator('.petstore-badge[data-stability]');
      if (STABILITY[id]) expect(await badge.textContent(), id).toBe(STABILITY[id]);
      else expect(await badge.count(), id).toBe(0);
    }
  });

  it('shows what a webhook endpoint receives: one entry per event type', async () => {
    const ids = await page
      .locator('.opblock[id^="operations-webhooks-"]')
      .evaluateAll((els) => els.map((e) => e.id.replace('operations-webhooks-', '')));
    expect(ids).toEqual([
      'orderPlacedWebhook',
      'orderApprovedWebhook',
      'orderDeliveredWebhook',
      'orderCancelledWebhook',
      'webhookTestWebhook',
    ]);
  });

  it('switches between the versions’ documents: the oldest deprecated throughout, its "Try it out" sent in its version', async () => {
    const other = await browser.newPage({ viewport: { width: 1280, height: 1400 } });
    try {
      await other.goto(`${server.url.replace('127.0.0.1', 'localhost')}/docs?version=${OLDEST_VERSION}`);
      await other.locator('.opblock').first().waitFor();
      expect(await other.locator('#petstore-version').inputValue()).toBe(OLDEST_VERSION);
      const operations = other.locator('.opblock[id^="operations-"]:not([id^="operations-webhooks-"])');
      expect(await other.locator('.opblock.opblock-deprecated:not([id^="operations-webhooks-"])').count()).toBe(
        await operations.count(),
      );
      const listVersions = other.locator('.opblock[id$="-listVersions"]');
      await listVersions.locator('.opblock-summary').first().click();
      await listVersions.locator('.try-out__btn').click();
      await listVersions.locator('.execute').click();
      const live = listVersions.locator('.live-responses-table');
      await live.locator('tr.response .response-col_status').waitFor();
      expect(await live.textContent()).toMatch(new RegExp(`petstore-version:\\s*${OLDEST_VERSION}`));
      await other.selectOption('#petstore-version', NEWEST_VERSION);
      await other.waitForURL(new RegExp(`version=${NEWEST_VERSION}`));
      await other.locator('.opblock').first().waitFor();
      expect(await other.locator('.opblock.opblock-deprecated:not([id^="operations-webhooks-"])').count()).toBe(1);
    } finally {
      await other.close();
    }
  });

  it('shows GET /pets/{petId} as deprecated with its sunset date', async () => {
    const getPet = operation('getPet');
    expect(await getPet.getAttribute('class')).toContain('opblock-deprecated');
    expect(await getPet.locator('.petstore-badge--deprecated').textContent()).toBe('deprecated · sunset 2031-03-15');
  });

  it('offers try-it on every operation except GET /store/orders and the event stream', async () => {
    for (const id of Object.values(GROUPS).flat()) {
      const op = operation(id);
      await op.locator('.opblock-summary').first().click();
      // The parameters' header is where Swagger UI puts "Try it out": wait until it is drawn.
      await op.locator('.opblock-body .opblock-section-header').first().waitFor();
      expect(await op.locator('.try-out__btn').count(), id).toBe(['listOrders', 'streamEvents'].includes(id) ? 0 : 1);
      await op.locator('.opblock-summary').first().click();
    }
    // Opening an operation is Swagger UI drawing it, in the click: 1.2–2 s each with Chromium 156 on a
    // slow two-core machine, where 20 s for all of them no longer did.
  }, 120_000);

  it('sends a real request with an API key and shows the response with its rate-limit headers', async () => {
    await page.locator('.auth-wrapper .authorize').click();
    await apiKeyForm(page).locator('#api_key_value').fill(key);
    await apiKeyForm(page).locator('.auth-btn-wrapper .authorize').click();
    await apiKeyForm(page).locator('.btn-done').click();

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

  it('shows a live meter once a key is authorised: the bar falls with every answer, then a 429 and the ban counts down', async () => {
    const meter = page.locator('#petstore-meter');
    await meter.waitFor();
    const minute = meter.locator('[data-window="minute"]');
    const remaining = async () => Number(await minute.getAttribute('data-remaining'));
    expect(await minute.getAttribute('data-limit')).toBe('60');
    expect(await meter.locator('[data-window="day"]').getAttribute('data-limit')).toBe('1000');
    // Requests the browser cannot answer from its cache (a read it holds is revalidated, and its 304
    // counts nothing): cancelling order 1, which this key does not have, is a counted 404.
    const cancel = operation('cancelOrder');
    await cancel.locator('.opblock-summary').first().click();
    await cancel.locator('.try-out__btn').click();
    // One request per answer awaited: a click Swagger UI drops while it still draws the previous answer
    // (seen once on a slow machine) is made again, and a request sent twice would fail the count below.
    let cancels = 0;
    page.on(
      'request',
      (request) =>
        void (request.method() === 'DELETE' && new URL(request.url()).pathname === '/store/orders/1' && cancels++),
    );
    const execute = async () => {
      const before = cancels;
      for (let clicks = 0; clicks < 5 && cancels === before; clicks++) {
        if (clicks > 0)
          process.stderr.write(`docs-page: Execute sent nothing after request ${before}; clicked again\n`);
        await cancel.locator('.execute').click();
        await expect
          .poll(() => cancels, { timeout: 5_000 })
          .toBeGreaterThan(before)
          .catch(() => undefined);
      }
      expect(cancels, 'requests sent by Execute').toBe(before + 1);
    };
    // Most of the minute is spent from here, past the page, so that Swagger UI draws only the last
    // answers (about a second each on a slow machine): the first of them moves the meter to what the
    // service counted, and each after it takes one more off.
    const leftAfterSpending = await spendMinuteDownTo(4);
    expect(await remaining(), 'the page has not seen the spending yet').toBeGreaterThan(leftAfterSpending);
    for (let left = leftAfterSpending; left > 0; left--) {
      await execute();
      await page
        .waitForFunction(
          (expected) =>
            document.querySelector('#petstore-meter [data-window="minute"]')?.getAttribute('data-remaining') ===
            String(expected),
          left - 1,
        )
        .catch(async () =>
          expect.fail(`after request ${cancels} the meter shows ${await remaining()} left, not ${left - 1}`),
        );
    }
    expect(await minute.locator('.petstore-meter__label').textContent()).toMatch(/0 of 60 left · next slot in \d+ s/);
    expect(await meter.locator('.petstore-meter__fill').first().getAttribute('style')).toContain('width:0%');
    // Over the limit: a 429 and its wait; sent again, the ban (BAN_AFTER_REJECTIONS=2) and its countdown.
    await execute();
    const countdown = meter.locator('.petstore-meter__countdown');
    await countdown.waitFor();
    expect(await countdown.textContent()).toMatch(/^Rate limited: \d+ s to wait$/);
    for (let i = 0; i < 3 && (await countdown.getAttribute('data-banned')) !== 'true'; i++) {
      await cancel.locator('.execute').click();
      await page.waitForTimeout(300);
    }
    expect(await countdown.getAttribute('data-banned')).toBe('true');
    const first = Number(await countdown.getAttribute('data-seconds'));
    expect(await countdown.textContent()).toBe(`Banned: ${first} s to wait`);
    await page.waitForFunction(
      (start) => Number(document.querySelector('.petstore-meter__countdown')?.getAttribute('data-seconds')) < start,
      first,
      {
        timeout: 3_000,
      },
    );
  }, 60_000);

  it('lets a test key ask for a fault from try-it: the Prefer field, and the 503 with Preference-Applied', async () => {
    await page.locator('.auth-wrapper .authorize').click();
    await apiKeyForm(page).locator('.auth-btn-wrapper button', { hasText: 'Logout' }).click();
    await apiKeyForm(page).locator('#api_key_value').fill(demoKey(server, 'test'));
    await apiKeyForm(page).locator('.auth-btn-wrapper .authorize').click();
    await apiKeyForm(page).locator('.btn-done').click();
    const listPets = operation('listPets');
    await listPets.locator('tr[data-param-name="Prefer"] input').fill('fault=503');
    await listPets.locator('.execute').click();
    const live = listPets.locator('.live-responses-table');
    await page.waitForFunction(() =>
      /preference-applied/.test(
        document.querySelector('.opblock[id$="-listPets"] .live-responses-table')?.textContent ?? '',
      ),
    );
    expect((await live.locator('tr.response .response-col_status').textContent())?.trim()).toBe('503');
    expect(await live.textContent()).toMatch(/preference-applied:\s*fault=503/);
  });

  it("shows the authorised test key's clock beside the meter, with buttons that move it", async () => {
    // The test key the test before authorised.
    const clock = page.locator('#petstore-meter .petstore-meter__clock');
    await clock.waitFor();
    expect(await clock.getAttribute('data-offset')).toBe('0');
    await clock.locator('button[data-advance="3600"]').click();
    await page.waitForFunction(
      () => document.querySelector('#petstore-meter .petstore-meter__clock')?.getAttribute('data-offset') === '3600',
    );
    await page.locator('#petstore-meter button[data-move="freeze"]').click();
    await page.waitForFunction(
      () => document.querySelector('#petstore-meter .petstore-meter__clock')?.getAttribute('data-frozen') === 'true',
    );
    expect(await page.locator('#petstore-meter .petstore-meter__clock').textContent()).toContain('(frozen)');
  });

  it('requests nothing outside localhost', () => {
    expect(outside).toEqual([]);
  });
});
