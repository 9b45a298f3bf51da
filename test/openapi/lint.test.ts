import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, testApp } from '../helpers/app.js';
import { tempDir } from '../helpers/process.js';

const run = promisify(execFile);
const ROOT = new URL('../../', import.meta.url).pathname;
const bin = (name: string) => join(ROOT, 'node_modules/.bin', name);

// The served document, as a deployment serves it: PUBLIC_URL is an https address there.
let t: TestApp;
let file: string;
beforeAll(async () => {
  t = await testApp({ env: { PUBLIC_URL: 'https://api.petstore.dev' } });
  file = join(tempDir(), 'openapi.json');
  writeFileSync(file, (await t.app.inject({ url: '/openapi.json' })).body);
});
afterAll(async () => t.close());

describe('the served document passes the linters', () => {
  it('Redocly (recommended rules, redocly.yaml): no error, no warning', async () => {
    const { stdout } = await run(bin('redocly'), ['lint', file, '--config', join(ROOT, 'redocly.yaml'), '--format=json'], { cwd: ROOT }).catch((e) => e);
    const { totals } = JSON.parse(stdout) as { totals: { errors: number; warnings: number } };
    expect(totals).toMatchObject({ errors: 0, warnings: 0 });
  }, 60_000);

  it('Spectral with the OWASP ruleset (.spectral.yaml): no error, no warning', async () => {
    const out = join(tempDir(), 'spectral.json');
    await run(bin('spectral'), ['lint', file, '--ruleset', join(ROOT, '.spectral.yaml'), '--format', 'json', '--output', out, '--fail-severity', 'hint'], {
      cwd: ROOT,
    }).catch((e) => e);
    const results = JSON.parse(readFileSync(out, 'utf8')) as Array<{ code: string; severity: number; path: string[] }>;
    expect(results.map((r) => `${r.code} at ${r.path.join('.')}`)).toEqual([]);
  }, 60_000);
});
