/**
 * Renders /docs in headless Chromium and saves the README's pictures: assets/docs-page.png (the page)
 * and assets/docs-meter.png (the live meter, after a free demo key has sent a few requests from the page).
 *   npm run docs:screenshot
 */
import { join } from 'node:path';
import { launchChromium } from '../test/helpers/browser.js';
import { startServer, tempDir } from '../test/helpers/process.js';

const server = await startServer({ DATABASE_URL: join(tempDir(), 'p.db') });
const key = /^ {2}free +(pet_[A-Za-z0-9_-]{32})$/m.exec(server.output())?.[1];
const browser = await launchChromium();
try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 1500 } });
  await page.goto(`${server.url.replace('127.0.0.1', 'localhost')}/docs`);
  await page.locator('.opblock').first().waitFor();
  await page.screenshot({ path: new URL('../assets/docs-page.png', import.meta.url).pathname });
  if (!key) throw new Error('no demo key in the start-up output');
  await page.locator('.auth-wrapper .authorize').click();
  await page.locator('.modal-ux input[type="text"]').fill(key);
  await page.locator('.modal-ux .auth-btn-wrapper .authorize').click();
  await page.locator('.modal-ux .btn-done').click();
  const cancel = page.locator('.opblock[id$="-cancelOrder"]');
  await cancel.locator('.opblock-summary').first().click();
  await cancel.locator('.try-out__btn').click();
  for (let i = 0; i < 7; i++) {
    await cancel.locator('.execute').click();
    await page.waitForTimeout(250);
  }
  await page.setViewportSize({ width: 1280, height: 700 });
  await page.screenshot({
    path: new URL('../assets/docs-meter.png', import.meta.url).pathname,
    clip: { x: 780, y: 0, width: 500, height: 180 },
  });
} finally {
  await browser.close();
  await server.stop();
}
