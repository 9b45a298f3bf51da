/**
 * Renders /docs in headless Chromium and saves assets/docs-page.png, the picture in the README.
 *   npm run docs:screenshot
 */
import { join } from 'node:path';
import { launchChromium } from '../test/helpers/browser.js';
import { startServer, tempDir } from '../test/helpers/process.js';

const server = await startServer({ DATABASE_URL: join(tempDir(), 'p.db') });
const browser = await launchChromium();
try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 1500 } });
  await page.goto(`${server.url.replace('127.0.0.1', 'localhost')}/docs`);
  await page.locator('.opblock').first().waitFor();
  await page.screenshot({ path: new URL('../assets/docs-page.png', import.meta.url).pathname });
} finally {
  await browser.close();
  await server.stop();
}
