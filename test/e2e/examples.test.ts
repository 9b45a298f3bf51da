import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BUILT, cli, runBuilt, type Server, startServer, tempDir } from '../helpers/process.js';

/**
 * The example clients (examples/) under `petstore conformance`, as CI runs them: the Python client on the
 * standard library and the typed TypeScript client pass every scenario of the catalogue, and the careless
 * client fails each, for the reasons examples/python/README.md lists. On the machine's own Python 3.
 */

const CLIENTS = {
  python: 'python3 examples/python/petstore_client.py',
  careless: 'python3 examples/python/careless_client.py',
  typed: 'node --import tsx examples/typescript/client.ts',
};

interface Verdict {
  id: string;
  passed: boolean;
  reasons: string[];
}

let server: Server;
let database: string;

beforeAll(async () => {
  database = join(tempDir(), 'p.db');
  server = await startServer({ DATABASE_URL: database, DEMO_KEYS: 'false' });
});
afterAll(async () => server?.stop());

/** The whole catalogue under the runner, `jobs` at a time, on a test key of its own: its verdicts and its time. */
async function conformance(
  command: string,
  jobs = 4,
): Promise<{ code: number | null; verdicts: Verdict[]; seconds: number }> {
  const created = await cli(['keys', 'create', '--plan', 'pro', '--test'], { DATABASE_URL: database });
  const key = /pet_test_[A-Za-z0-9_-]{32}/.exec(created.stdout)![0];
  const args = [
    'conformance',
    '--url',
    server.url,
    '--key',
    key,
    '--command',
    command,
    '--jobs',
    String(jobs),
    '--json',
  ];
  const run = await runBuilt(BUILT.cli, args, {});
  expect(run.stderr).toBe('');
  const report = JSON.parse(run.stdout) as { verdicts: Verdict[]; seconds: number };
  return { code: run.code, ...report };
}

/** The examples' README's list of the scenarios the careless client fails, and the checks each fails on. */
function carelessFailures(): Map<string, string[]> {
  const readme = readFileSync('examples/python/README.md', 'utf8');
  const from = readme.indexOf('| scenario | fails |');
  const section = readme.slice(from, readme.indexOf('\n\n', from));
  const rows = [...section.matchAll(/^\| `([a-z0-9-]+)` \| ([^|]+) \|/gm)];
  return new Map(rows.map(([, id, checks]) => [id!, [...checks!.matchAll(/`([a-z-]+)`/g)].map((m) => m[1]!).sort()]));
}

describe('the example clients under the runner', { timeout: 240_000 }, () => {
  it('the Python client, on the standard library alone, passes every scenario', async () => {
    const { code, verdicts } = await conformance(CLIENTS.python);
    expect(verdicts.filter((verdict) => !verdict.passed)).toEqual([]);
    expect(code).toBe(0);
  });

  it('the typed TypeScript client passes every scenario, its waits moving the key clock', async () => {
    const { code, verdicts, seconds } = await conformance(CLIENTS.typed);
    expect(verdicts.filter((verdict) => !verdict.passed)).toEqual([]);
    expect(code).toBe(0);
    expect(seconds).toBeGreaterThan(0);
  });

  it('the careless client fails each scenario, on the checks its README lists and no others', async () => {
    // One scenario at a time: its repeats at once must reach the service at once, and four clients starting
    // beside each other on two cores can hold one back long enough to look like a wait (README, "Running a
    // client's conformance suite").
    const { code, verdicts } = await conformance(CLIENTS.careless, 1);
    expect(code).toBe(1);
    const listed = carelessFailures();
    expect([...listed.keys()].sort()).toEqual(verdicts.map((verdict) => verdict.id).sort());
    for (const verdict of verdicts) {
      expect(verdict.passed, verdict.id).toBe(false);
      const failed = verdict.reasons.flatMap((reason) => /^([a-z-]+) failed: /.exec(reason)?.[1] ?? []).sort();
      expect(failed, verdict.id).toEqual(listed.get(verdict.id));
    }
  });
});
