import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHECK_IDS } from '../../src/report-card/checks.js';
import { NEWEST_VERSION } from '../../src/versions/versions.js';
import { type TestApp, testApp } from '../helpers/app.js';
import { BUILT, freePort, type Run, runBuilt } from '../helpers/process.js';

/**
 * `petstore report-card`, the built CLI in its own process, reading a test key's card over HTTP as a client's CI would.
 */

let t: TestApp;
let url: string;
beforeAll(async () => {
  t = await testApp();
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  url = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
});
afterAll(async () => t.close());

const reportCard = (key: string, ...more: string[]) =>
  runBuilt(BUILT.cli, ['report-card', '--url', url, '--key', key, ...more], {});
/** The key appears nowhere in what the command said. */
const quiet = (run: Run, key: string) =>
  expect(`${run.stdout}${run.stderr}`).not.toContain(key.slice('pet_test_'.length));

describe('petstore report-card', () => {
  it('a card with a failed check: exit code 1, a line per check, the latest failure with its request id under the failed one', async () => {
    const key = await t.newKey({ plan: 'free', test: true });
    const unpinned = await t.request({ url: '/pets?limit=1', headers: { 'x-api-key': key } });
    const run = await reportCard(key);
    expect(run.code).toBe(1);
    expect(run.stderr).toBe('');
    const lines = run.stdout.split('\n');
    expect(lines[0]).toMatch(/^Report card of the key since \S+: 1 request graded$/);
    expect(lines.filter((line) => /^(passed|failed|untested) /.test(line))).toHaveLength(CHECK_IDS.length);
    const failed = lines.findIndex((line) => line.startsWith('failed '));
    expect(lines[failed]).toMatch(/^failed +1\/1 +Pins a version \(pins-version\)$/);
    const requestId = String(unpinned.headers['x-request-id']);
    expect(lines[failed + 1]).toMatch(
      new RegExp(`^ +latest: GET /pets carried no Petstore-Version \\(request ${requestId}, at [0-9TZ:.-]+\\)$`),
    );
    // The exchange itself, in the key's request log.
    expect(lines[failed + 2]).toMatch(new RegExp(`^ +exchange: ${t.config.publicUrl}/request-log/${requestId}$`));
    expect(lines[failed + 3]).toContain(`See ${t.config.publicUrl}/checks/pins-version`);
    expect(run.stdout).toContain('1 of 13 checks failed.');
    quiet(run, key);
  });

  it('a clean card: exit code 0; --json prints the card as the service answered it', { timeout: 60_000 }, async () => {
    const key = await t.newKey({ plan: 'free', test: true });
    await t.request({ url: '/pets?limit=1', headers: { 'x-api-key': key, 'petstore-version': NEWEST_VERSION } });
    const run = await reportCard(key);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^passed +1\/0 +Pins a version \(pins-version\)$/m);
    expect(run.stdout).toContain('No check failed (12 untested: their situations have not arisen).');
    const json = await reportCard(key, '--json');
    expect(json.code).toBe(0);
    const card = JSON.parse(json.stdout) as { requests: number; checks: { id: string; status: string }[] };
    expect(card.requests).toBe(1);
    expect(card.checks.map((check) => check.status)).toEqual(
      card.checks.map((check) => (check.id === 'pins-version' ? 'passed' : 'untested')),
    );
    quiet(run, key);
  });

  it(
    'no card to read: exit code 2 and one line, never the key: a live key, an unknown key, nothing listening',
    { timeout: 60_000 },
    async () => {
      const live = await t.newKey('free');
      const refused = await reportCard(live);
      expect(refused).toMatchObject({ code: 2, stdout: '' });
      expect(refused.stderr).toMatch(/^petstore: http:\/\/127\.0\.0\.1:\d+ answered 403 test-key-required: .+\n$/);
      quiet(refused, live);

      const unknown = `pet_test_${'A'.repeat(32)}`;
      const unauthorized = await reportCard(unknown);
      expect(unauthorized).toMatchObject({ code: 2, stdout: '' });
      expect(unauthorized.stderr).toMatch(/^petstore: http:\/\/127\.0\.0\.1:\d+ answered 401 unauthorized: [^\n]+\n$/);
      quiet(unauthorized, unknown);

      const nobody = `http://127.0.0.1:${await freePort()}`;
      const unreachable = await runBuilt(BUILT.cli, ['report-card', '--url', nobody, '--key', unknown], {});
      expect(unreachable).toMatchObject({ code: 2, stdout: '' });
      expect(unreachable.stderr).toMatch(
        new RegExp(`^petstore: could not reach ${nobody.replace(/\./g, '\\.')}: [^\\n]*ECONNREFUSED[^\\n]*\\n$`),
      );
      quiet(unreachable, unknown);
    },
  );

  it('a usage error exits 2, as every command’s does', async () => {
    const run = await runBuilt(BUILT.cli, ['report-card', '--url', 'not a url', '--key', 'pet_test_x'], {});
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('expected a URL');
    expect((await runBuilt(BUILT.cli, ['report-card', '--url', url], {})).code).toBe(2);
  });
});
