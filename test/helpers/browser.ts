import { existsSync } from 'node:fs';
import { type Browser, chromium, type Locator, type Page } from 'playwright-core';

export const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';

/** Whether Debian's Chromium is here; in CI it must be (.ci/run installs it), elsewhere the suite skips. */
export function chromiumInstalled(): boolean {
  if (existsSync(CHROMIUM)) return true;
  if (process.env.CI === 'true')
    throw new Error(`Chromium is not at ${CHROMIUM}; .ci/run installs it (apt-get install chromium)`);
  console.warn(`Browser suites skipped: no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)`);
  return false;
}

/** Headless Chromium with the flags this closed network needs (without them it stalls on Google's hosts). */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--no-first-run',
      '--disable-sync',
      '--disable-quic',
    ],
  });
}

/**
 * The Authorize dialog's form for the API key (the one naming its header, `X-API-Key`), apart from the OAuth 2.0 and
 * HTTP Basic forms beside it: its input (`#api_key_value`), its Authorize, Logout and Close buttons.
 */
export function apiKeyForm(page: Page): Locator {
  return page.locator('.modal-ux .auth-container').filter({ hasText: 'X-API-Key' });
}
