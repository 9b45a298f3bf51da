import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumInstalled, launchChromium } from '../helpers/browser.js';
import { cli, freePort, type Server, startServer, tempDir } from '../helpers/process.js';

/**
 * The docs page's Authorize with OAuth 2.0 (docs/tokens.md), in a real browser: the OAuth2 scheme's client
 * credentials flow, the key's id and key typed in as client_id and client_secret, gets a token from the token
 * endpoint (Swagger UI posts the grant itself, the credentials by HTTP Basic), and "Try it out" sends it:
 * GET /pets/{petId} goes with `Authorization: Bearer <that token>`, no X-API-Key, and answers 200. Swagger UI's
 * own code as the page configures it, nothing set up for the test.
 */

// Chromium draws Swagger UI on the CPU, a second or more per operation opened on a busy two-core machine.
describe.skipIf(!chromiumInstalled())('/docs authorised by OAuth 2.0 client credentials', { timeout: 60_000 }, () => {
  let server: Server;
  let browser: Browser;
  let page: Page;
  let url: string;
  let clientId: string;
  let clientSecret: string;
  const outside: string[] = [];

  beforeAll(async () => {
    const database = join(tempDir(), 'p.db');
    // The document's token URL is PUBLIC_URL's: on 127.0.0.1 here, the page's own origin (PORT overrides
    // startServer's choice of port, so that PUBLIC_URL can name it).
    const port = await freePort();
    url = `http://127.0.0.1:${port}`;
    server = await startServer({ DATABASE_URL: database, DEMO_KEYS: 'false', PORT: String(port), PUBLIC_URL: url });
    const created = await cli(['keys', 'create', '--plan', 'pro', '--json'], { DATABASE_URL: database });
    ({ id: clientId, key: clientSecret } = JSON.parse(created.stdout) as { id: string; key: string });
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 1400 } });
    page.on('request', (request) => {
      const { protocol, hostname } = new URL(request.url());
      if (protocol !== 'data:' && hostname !== '127.0.0.1') outside.push(request.url());
    });
    await page.goto(`${url}/docs`);
    await page.locator('.opblock').first().waitFor();
  });
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  /** A request or answer's path is `path`. */
  const to = (path: string) => (message: { url(): string }) => new URL(message.url()).pathname === path;

  it('Authorize gets a token with client credentials, and "Try it out" sends it as a Bearer token', async () => {
    await page.locator('.auth-wrapper .authorize').click();
    // The dialog holds every scheme (ApiKey, OAuth2, the token endpoint's ClientCredentials): the OAuth2 one's form.
    const oauth = page
      .locator('.modal-ux .auth-container')
      .filter({ has: page.locator('h4', { hasText: /\(OAuth2, clientCredentials\)/ }) });
    await oauth.locator('#client_id_clientCredentials').fill(clientId);
    await oauth.locator('#client_secret_clientCredentials').fill(clientSecret);
    // No scope ticked: Swagger UI sends none, and the token may do all the key may.
    const tokenAnswer = page.waitForResponse(to('/oauth/token'));
    await oauth.getByRole('button', { name: 'Apply given OAuth2 credentials' }).click();
    const answer = await tokenAnswer;
    const asked = answer.request();
    expect([asked.method(), answer.status()]).toEqual(['POST', 200]);
    expect(new URLSearchParams(asked.postData() ?? '').get('grant_type')).toBe('client_credentials');
    const basic = `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}`;
    expect((await asked.allHeaders()).authorization === basic, 'HTTP Basic with the id and key').toBe(true);
    const token = (await answer.json()) as { access_token: string; token_type: string; scope: string };
    expect([token.token_type, token.scope]).toEqual(['Bearer', 'pets:read orders:read orders:write webhooks:write']);
    await oauth.locator('h6', { hasText: 'Authorized' }).waitFor();
    await oauth.locator('.btn-done').click();

    const getPet = page.locator('.opblock[id$="-getPet"]');
    await getPet.locator('.opblock-summary').first().click();
    await getPet.locator('.try-out__btn').click();
    await getPet.locator('tr[data-param-name="petId"] input').fill('1');
    const sent = page.waitForRequest(to('/pets/1'));
    await getPet.locator('.execute').click();
    const headers = await (await sent).allHeaders();
    // Compared, not shown: a failure must not print the token.
    expect(headers.authorization === `Bearer ${token.access_token}`, 'Authorization: Bearer <the token>').toBe(true);
    expect(headers['x-api-key']).toBeUndefined();

    const live = getPet.locator('.live-responses-table');
    const status = live.locator('tr.response .response-col_status');
    await status.waitFor();
    expect((await status.textContent())?.trim()).toBe('200');
    expect(await live.textContent()).toContain('"name"');
    // The curl line Swagger UI shows for the request carries the token too.
    const curl = (await getPet.locator('.curl-command').textContent()) ?? '';
    expect(curl.includes(`-H 'Authorization: Bearer ${token.access_token}'`), 'the curl line').toBe(true);
  });

  it('requests nothing outside 127.0.0.1', () => {
    expect(outside).toEqual([]);
  });
});
