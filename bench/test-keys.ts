/**
 * What a test key's request costs beside a live key's (every request of a test key is graded:
 * docs/testing-clients.md#is-my-client-a-good-api-citizen; its clock is read at each:
 * docs/testing-clients.md#testing-your-client-in-seconds; faults/: its preferences are looked at): one embedded
 * service, the same path, 200 live keys and 200 test keys of the same plan, by turns (bench/load.ts `byTurns`),
 * CPU µs per request of each. In the events phase of
 * `npm run bench` (embedded), and alone: `npm run bench:test-keys` (TEST_KEYS_ROUNDS, default 10).
 */
import { rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { byTurns, type ByTurns, oneAtATime, type Requests } from './load.js';
import { startService } from './service.js';
import { sqliteFile } from './setup.js';
import { NEWEST_VERSION } from '../src/versions/versions.js';

const ADMIN = 'bench-admin-token-0123456789abcdef';
const KEYS = 200;
export const TEST_KEY_PATHS = ['/pets/1', '/pets?limit=5'] as const;

export interface TestKeyFigures {
  /**
   * By path: live (a) against test (b) keys, by turns; `dearer`
   * is the test key's CPU µs/req over the live key's, less 1.
   */
  paths: { path: string; turns: ByTurns; dearer: number }[];
}

export async function measureTestKeys(
  mode: string,
  env: Record<string, string>,
  rounds = 10,
  seconds = 3,
): Promise<TestKeyFigures> {
  const file = sqliteFile();
  const service = await startService({ ...env, DATABASE_URL: file, ADMIN_TOKEN: ADMIN });
  try {
    const create = async (test: boolean) => {
      const made = await fetch(`${service.adminUrl}/admin/keys`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ plan: 'enterprise', perMinute: 100_000_000, perDay: 1_000_000_000, test }),
      });
      if (!made.ok) throw new Error(`key creation answered ${made.status}`);
      return ((await made.json()) as { key: string }).key;
    };
    const [live, test] = [
      await Promise.all(Array.from({ length: KEYS }, () => create(false))),
      await Promise.all(Array.from({ length: KEYS }, () => create(true))),
    ];
    const paths: TestKeyFigures['paths'] = [];
    for (const path of TEST_KEY_PATHS) {
      // A client that pins its version, as a graded one should; the test keys' cards see a passing client.
      const requests = (keys: string[]): Requests =>
        keys.map((key) => ({ method: 'GET', path, headers: { 'x-api-key': key, 'petstore-version': NEWEST_VERSION } }));
      const sides = { a: requests(live), b: requests(test) };
      for (const side of [sides.a, sides.b]) await oneAtATime(service.url, side, side.length);
      const turns = await byTurns(service, service, sides, 50, rounds, seconds);
      const dearer = Math.round((turns.cpuUsPerRequest.b / turns.cpuUsPerRequest.a - 1) * 1000) / 1000;
      paths.push({ path, turns, dearer });
      process.stderr.write(`  ${mode}: ${testKeyLine(path, turns, dearer)}\n`);
    }
    return { paths };
  } finally {
    await service.stop();
    rmSync(dirname(file), { recursive: true, force: true });
  }
}

export function testKeyLine(path: string, turns: ByTurns, dearer: number): string {
  const { a, b } = turns.cpuUsPerRequest;
  const spread = `${Math.min(...turns.ratios).toFixed(3)}–${Math.max(...turns.ratios).toFixed(3)}`;
  return (
    `GET ${path}, test keys against live keys by turns (${turns.ratios.length} rounds): CPU ${a} → ${b} µs/req ` +
    `(medians; ${dearer >= 0 ? '+' : ''}${(dearer * 100).toFixed(1)} %), req/s ratio ${turns.median} ` +
    `(rounds ${spread}); statuses ${JSON.stringify(turns.statuses.b)}`
  );
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const figures = await measureTestKeys('embedded', { REDIS_URL: '' }, Number(process.env.TEST_KEYS_ROUNDS || 10));
  for (const { path, turns, dearer } of figures.paths) console.log(testKeyLine(path, turns, dearer));
}
