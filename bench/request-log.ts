/**
 * What recording a test key's request in its request log costs (docs/request-log.md; target: at most 15 % more
 * service CPU): two embedded services, one recording (REQUEST_LOG_PER_KEY=1000) and one not (0), the same path,
 * 200 test keys on each, by turns (bench/load.ts `byTurns`), CPU µs per request of each service. Alone:
 * `npm run bench:request-log` (REQUEST_LOG_ROUNDS, default 10).
 */
import { rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { byTurns, type ByTurns, oneAtATime, type Requests } from './load.js';
import { startService } from './service.js';
import { sqliteFile } from './setup.js';
import { NEWEST_VERSION } from '../src/versions/versions.js';

const ADMIN = 'bench-admin-token-0123456789abcdef';
const KEYS = 200;
export const REQUEST_LOG_PATHS = ['/pets/1', '/pets?limit=5'] as const;

async function testKeys(service: Awaited<ReturnType<typeof startService>>): Promise<string[]> {
  const create = async () => {
    const made = await fetch(`${service.adminUrl}/admin/keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ plan: 'enterprise', perMinute: 100_000_000, perDay: 1_000_000_000, test: true }),
    });
    if (!made.ok) throw new Error(`key creation answered ${made.status}`);
    return ((await made.json()) as { key: string }).key;
  };
  return Promise.all(Array.from({ length: KEYS }, create));
}

export async function measureRequestLog(rounds = 10, seconds = 3) {
  const files = [sqliteFile(), sqliteFile()];
  const env = (file: string, perKey: string) => ({
    REDIS_URL: '',
    DATABASE_URL: file,
    ADMIN_TOKEN: ADMIN,
    REQUEST_LOG_PER_KEY: perKey,
  });
  const unrecorded = await startService(env(files[0]!, '0'));
  const recorded = await startService(env(files[1]!, '1000'));
  try {
    const keys = { a: await testKeys(unrecorded), b: await testKeys(recorded) };
    const paths: { path: string; turns: ByTurns; dearer: number }[] = [];
    for (const path of REQUEST_LOG_PATHS) {
      const requests = (list: string[]): Requests =>
        list.map((key) => ({
          method: 'GET' as const,
          path,
          headers: { 'x-api-key': key, 'petstore-version': NEWEST_VERSION },
        }));
      const sides = { a: requests(keys.a), b: requests(keys.b) };
      await oneAtATime(unrecorded.url, sides.a, sides.a.length);
      await oneAtATime(recorded.url, sides.b, sides.b.length);
      const turns = await byTurns(unrecorded, recorded, sides, 50, rounds, seconds);
      const dearer = Math.round((turns.cpuUsPerRequest.b / turns.cpuUsPerRequest.a - 1) * 1000) / 1000;
      paths.push({ path, turns, dearer });
      process.stderr.write(`  ${requestLogLine(path, turns, dearer)}\n`);
    }
    return paths;
  } finally {
    await Promise.all([unrecorded.stop(), recorded.stop()]);
    for (const file of files) rmSync(dirname(file), { recursive: true, force: true });
  }
}

export function requestLogLine(path: string, turns: ByTurns, dearer: number): string {
  const { a, b } = turns.cpuUsPerRequest;
  const spread = `${Math.min(...turns.ratios).toFixed(3)}–${Math.max(...turns.ratios).toFixed(3)}`;
  return (
    `GET ${path}, test keys recorded against unrecorded by turns (${turns.ratios.length} rounds): CPU ${a} → ${b} ` +
    `µs/req (medians; ${dearer >= 0 ? '+' : ''}${(dearer * 100).toFixed(1)} %), req/s ratio ${turns.median} ` +
    `(rounds ${spread}); statuses ${JSON.stringify(turns.statuses.b)}`
  );
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const { path, turns, dearer } of await measureRequestLog(Number(process.env.REQUEST_LOG_ROUNDS || 10)))
    console.log(requestLogLine(path, turns, dearer));
}
