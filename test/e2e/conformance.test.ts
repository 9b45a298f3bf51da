import { execFileSync, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseJunit, type TestSuites } from 'junit2json';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/database.js';
import {
  BUILT,
  cli,
  freePort,
  ROOT,
  type Run,
  runBuilt,
  type Server,
  startServer,
  tempDir,
} from '../helpers/process.js';

/**
 * `petstore conformance` (docs/testing-clients.md#running-a-clients-conformance-suite), the built CLI against the
 * built service: its reports read by a JUnit parser no one here wrote, its exit codes, its options, and the
 * children it makes deleted afterwards, also when interrupted.
 */

const PYTHON_CLIENT = 'python3 examples/python/petstore_client.py';
let server: Server;
let database: string;
let key: string;
let keyId: string;

beforeAll(async () => {
  database = join(tempDir(), 'p.db');
  server = await startServer({ DATABASE_URL: database, DEMO_KEYS: 'false' });
  const created = await cli(['keys', 'create', '--plan', 'pro', '--test'], { DATABASE_URL: database });
  key = /pet_test_[A-Za-z0-9_-]{32}/.exec(created.stdout)![0];
  keyId = /key_[0-9a-f]{16}/.exec(created.stdout)![0];
});
afterAll(async () => server?.stop());

const conformance = (args: string[]): Promise<Run> =>
  runBuilt(BUILT.cli, ['conformance', '--url', server.url, ...args], {});

/** The children of the key that are alive. */
async function aliveChildren(): Promise<number> {
  const db = openDatabase({ kind: 'sqlite', file: database });
  try {
    const rows = await db
      .selectFrom('api_keys')
      .select('id')
      .where('parent_id', '=', keyId)
      .where('revoked_at', 'is', null)
      .execute();
    return rows.length;
  } finally {
    await db.destroy();
  }
}

describe('petstore conformance', () => {
  it('a client that does nothing passes no scenario; JUnit XML and the summary say why; the children are deleted', async () => {
    const dir = tempDir();
    const [junit, summary] = [join(dir, 'junit.xml'), join(dir, 'step-summary')];
    const run = await conformance([
      '--key',
      key,
      '--command',
      'true',
      '--jobs',
      '4',
      '--junit',
      junit,
      '--summary',
      summary,
    ]);
    expect(run.code).toBe(1);
    const scenarios = (await (await fetch(`${server.url}/scenarios`)).json()) as { scenarios: { id: string }[] };
    const ids = scenarios.scenarios.map((scenario) => scenario.id);
    const report = (await parseJunit(readFileSync(junit, 'utf8'))) as TestSuites;
    expect(report).toMatchObject({ tests: ids.length, failures: ids.length });
    const cases = report.testsuite!.flatMap((suite) => suite.testcase ?? []);
    expect(cases.map((testCase) => testCase.name)).toEqual(ids);
    for (const testCase of cases) {
      const failure = testCase.failure?.[0];
      expect(failure?.inner, testCase.name).toMatch(/step 0 \(.*\) was used 0 of \d+ times?/);
    }
    const markdown = readFileSync(summary, 'utf8');
    expect(markdown).toContain(`## Petstore conformance: 0 of ${ids.length} scenarios passed`);
    expect(markdown).toContain('| Scenario | Result | Time | Why |');
    for (const id of ids) expect(markdown).toContain(`### ${id}: `);
    expect(run.stdout).toContain(`0 of ${ids.length} passed`);
    expect(run.stdout + run.stderr + readFileSync(junit, 'utf8') + markdown).not.toContain(key);
    expect(await aliveChildren()).toBe(0);
  });

  it('a good client passes: exit 0, and --json gives the verdicts', async () => {
    const run = await conformance([
      '--key',
      key,
      '--command',
      PYTHON_CLIENT,
      '--scenario',
      'version-pin',
      '--scenario',
      'revalidate',
      '--json',
    ]);
    expect(run.code, run.stdout + run.stderr).toBe(0);
    const report = JSON.parse(run.stdout) as { verdicts: { id: string; passed: boolean; reasons: string[] }[] };
    expect(report.verdicts.map(({ id, passed, reasons }) => ({ id, passed, reasons }))).toEqual([
      { id: 'revalidate', passed: true, reasons: [] },
      { id: 'version-pin', passed: true, reasons: [] },
    ]);
    expect(await aliveChildren()).toBe(0);
  });

  it("examines the client's receiver at --receiver-url, once it printed PETSTORE_READY, then stops it", async () => {
    const port = await freePort();
    const run = await conformance([
      '--key',
      key,
      '--command',
      PYTHON_CLIENT,
      '--scenario',
      'webhook-receiver',
      '--receiver-url',
      `http://127.0.0.1:${port}/hooks`,
    ]);
    expect(run.code, run.stdout + run.stderr).toBe(0);
    // A receiver that never says it is ready fails, with why.
    const silent = await conformance(['--key', key, '--command', 'sleep 0.2', '--scenario', 'webhook-receiver']);
    expect(silent.code).toBe(1);
    expect(silent.stdout).toContain('the command exited with code 0 before it printed PETSTORE_READY');
  });

  it('--timeout ends a command that does not finish, and fails its scenario', async () => {
    const started = Date.now();
    const run = await conformance([
      '--key',
      key,
      '--command',
      'sleep 30',
      '--timeout',
      '1',
      '--scenario',
      'version-pin',
    ]);
    expect(run.code).toBe(1);
    expect(run.stdout).toContain('the command did not finish within 1 s');
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(await aliveChildren()).toBe(0);
  });

  it('exits 2 with one line when it cannot run: no service, a live key, a bad option, an unknown scenario', async () => {
    const live = /pet_[A-Za-z0-9_-]{32}/.exec(
      (await cli(['keys', 'create', '--plan', 'free'], { DATABASE_URL: database })).stdout,
    )![0];
    const nowhere = `http://127.0.0.1:${await freePort()}`;
    const runs: [string[], RegExp][] = [
      [['--url', nowhere, '--key', key, '--command', 'true'], /could not reach/],
      [['--key', live, '--command', 'true'], /live key/],
      [['--key', 'pet_test_nope', '--command', 'true'], /not a key of this service/],
      [['--key', key, '--command', 'true', '--jobs', '0'], /--jobs/],
      [['--key', key, '--command', 'true', '--scenario', 'no-such-thing'], /no scenario no-such-thing/],
      [['--key', key], /--command/],
    ];
    for (const [args, said] of runs) {
      const run =
        args[0] === '--url' ? await runBuilt(BUILT.cli, ['conformance', ...args], {}) : await conformance(args);
      expect(run.code, args.join(' ')).toBe(2);
      expect(run.stderr.trim().split('\n'), args.join(' ')).toHaveLength(1);
      expect(run.stderr).toMatch(said);
      expect(run.stderr).not.toContain(key);
    }
  });

  it('Ctrl-C ends the commands under way, deletes the children made so far, and exits 2', async () => {
    const seconds = `61.${Math.floor(Math.random() * 1000)}`;
    const marker = `sleep ${seconds}`;
    const child = spawn(
      process.execPath,
      [BUILT.cli, 'conformance', '--url', server.url, '--key', key, '--command', marker, '--jobs', '3'],
      { cwd: ROOT },
    );
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    const running = () => {
      try {
        // The commands' own processes, not the runner, whose arguments name them too.
        return execFileSync('pgrep', ['-f', `^sleep ${seconds.replace('.', '\\.')}$`])
          .toString()
          .trim()
          .split('\n').length;
      } catch {
        return 0;
      }
    };
    while (running() < 3) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await aliveChildren()).toBe(3);
    child.kill('SIGINT');
    expect(await exited).toBe(2);
    expect(stderr.trim()).toBe('petstore conformance: interrupted; 3 child keys deleted');
    expect(await aliveChildren()).toBe(0);
    expect(running()).toBe(0);
  });
});
