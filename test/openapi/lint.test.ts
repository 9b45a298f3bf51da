import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, testApp } from '../helpers/app.js';
import { tempDir } from '../helpers/process.js';
import { VERSIONS } from '../../src/versions/versions.js';

const run = promisify(execFile);
const ROOT = new URL('../../', import.meta.url).pathname;
const bin = (name: string) => join(ROOT, 'node_modules/.bin', name);

// The served documents, one per version, as a deployment serves them: PUBLIC_URL is an https address there.
let t: TestApp;
const files = new Map<string, string>();
beforeAll(async () => {
  t = await testApp({ env: { PUBLIC_URL: 'https://api.petstore.dev' } });
  for (const version of VERSIONS) {
    const file = join(tempDir(), `openapi-${version}.json`);
    writeFileSync(file, (await t.app.inject({ url: `/openapi.json?version=${version}` })).body);
    files.set(version, file);
  }
});
afterAll(async () => t.close());

describe.each(VERSIONS)('the served document of version %s passes the linters', (version) => {
  it('Redocly (recommended rules, redocly.yaml): no error, no warning', async () => {
    const file = files.get(version)!;
    const { stdout } = await run(
      bin('redocly'),
      ['lint', file, '--config', join(ROOT, 'redocly.yaml'), '--format=json'],
      { cwd: ROOT },
    ).catch((e) => e);
    const { totals } = JSON.parse(stdout) as { totals: { errors: number; warnings: number } };
    expect(totals).toMatchObject({ errors: 0, warnings: 0 });
  }, 60_000);

  it('Spectral with the OWASP ruleset (.spectral.yaml): no error, no warning', async () => {
    const out = join(tempDir(), 'spectral.json');
    await run(
      bin('spectral'),
      [
        'lint',
        files.get(version)!,
        '--ruleset',
        join(ROOT, '.spectral.yaml'),
        '--format',
        'json',
        '--output',
        out,
        '--fail-severity',
        'hint',
      ],
      {
        cwd: ROOT,
      },
    ).catch((e) => e);
    const results = JSON.parse(readFileSync(out, 'utf8')) as Array<{ code: string; severity: number; path: string[] }>;
    expect(results.map((r) => `${r.code} at ${r.path.join('.')}`)).toEqual([]);
  }, 60_000);
});
