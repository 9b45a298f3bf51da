/**
 * What a Bearer request costs beside the same request with `X-API-Key` (docs/tokens.md; target: at most 5 % more
 * service CPU): one embedded service, `GET /pets/1`, 200 live keys, each sending by turns its key and an access
 * token of its own (bench/load.ts `byTurns`), CPU µs per request of each. Alone: `npm run bench:bearer`
 * (BEARER_ROUNDS, default 10).
 */
import { rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { byTurns, type ByTurns, oneAtATime, type Requests } from './load.js';
import { startService } from './service.js';
import { sqliteFile } from './setup.js';
import { NEWEST_VERSION } from '../src/versions/versions.js';

const ADMIN = 'bench-admin-token-0123456789abcdef';
const KEYS = 200;
const PATH = '/pets/1';

export async function measureBearer(rounds = 10, seconds = 3): Promise<{ turns: ByTurns; dearer: number }> {
  const file = sqliteFile();
  const service = await startService({ REDIS_URL: '', DATABASE_URL: file, ADMIN_TOKEN: ADMIN });
  try {
    const create = async () => {
      const made = await fetch(`${service.adminUrl}/admin/keys`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ plan: 'enterprise', perMinute: 100_000_000, perDay: 1_000_000_000 }),
      });
      if (!made.ok) throw new Error(`key creation answered ${made.status}`);
      const { id, key } = (await made.json()) as { id: string; key: string };
      const granted = await fetch(`${service.url}/oauth/token`, {
        method: 'POST',
        headers: {
          authorization: `Basic ${Buffer.from(`${id}:${key}`).toString('base64')}`,
          'content-type': 'application/x-www-form-urlencoded',
        },
        body: 'grant_type=client_credentials',
      });
      if (!granted.ok) throw new Error(`the token request answered ${granted.status}`);
      return { key, token: ((await granted.json()) as { access_token: string }).access_token };
    };
    const keys = await Promise.all(Array.from({ length: KEYS }, create));
    const request = (headers: Record<string, string>) => ({
      method: 'GET' as const,
      path: PATH,
      headers: { ...headers, 'petstore-version': NEWEST_VERSION },
    });
    const sides: { a: Requests; b: Requests } = {
      a: keys.map(({ key }) => request({ 'x-api-key': key })),
      b: keys.map(({ token }) => request({ authorization: `Bearer ${token}` })),
    };
    // Every key and token seen once before the count: a token's signature is checked at its first request only.
    for (const side of [sides.a, sides.b]) await oneAtATime(service.url, side, side.length);
    const turns = await byTurns(service, service, sides, 50, rounds, seconds);
    const dearer = Math.round((turns.cpuUsPerRequest.b / turns.cpuUsPerRequest.a - 1) * 1000) / 1000;
    return { turns, dearer };
  } finally {
    await service.stop();
    rmSync(dirname(file), { recursive: true, force: true });
  }
}

export function bearerLine(turns: ByTurns, dearer: number): string {
  const { a, b } = turns.cpuUsPerRequest;
  const spread = `${Math.min(...turns.ratios).toFixed(3)}–${Math.max(...turns.ratios).toFixed(3)}`;
  return (
    `GET ${PATH}, Bearer against X-API-Key by turns (${turns.ratios.length} rounds): CPU ${a} → ${b} µs/req ` +
    `(medians; ${dearer >= 0 ? '+' : ''}${(dearer * 100).toFixed(1)} %), req/s ratio ${turns.median} ` +
    `(rounds ${spread}); statuses ${JSON.stringify(turns.statuses.b)}`
  );
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { turns, dearer } = await measureBearer(Number(process.env.BEARER_ROUNDS || 10));
  console.log(bearerLine(turns, dearer));
}
