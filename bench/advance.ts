/**
 * A test key's clock advanced a year (docs/testing-clients.md#testing-your-client-in-seconds), in the events phase
 * (embedded): a test key with 10,000 pending orders (placed over a second or two of its running clock: many instants to
 * move at) and one endpoint that refuses every connection is advanced 365 days, while
 * other keys send `GET /pets/{petId}` at 1,000 requests a second. Reports how long the advance took to
 * answer (every move of its orders that fell due made before it answers), the longest the service held
 * its event loop meanwhile and its p99 delay (EVENT_LOOP_RESOLUTION_MS=1), and the other keys' p99 over
 * their p99 with no advance, on the same service.
 */
import { rmSync } from 'node:fs';
import { dirname } from 'node:path';
import autocannon from 'autocannon';
import { round } from './load.js';
import { startService } from './service.js';
import { sqliteFile } from './setup.js';

export const ADVANCE_BENCH = {
  pendingOrders: 10_000,
  otherKeys: 100,
  otherRate: 1_000,
  seconds: 8,
  advanceSeconds: 365 * 86_400,
};

export interface AdvanceFigures {
  pendingOrders: number;
  /** How long `POST /test-clock/advance` took to answer, in s. */
  answerSeconds: number;
  /** The service's event loop while the advance ran: its longest block and its p99 delay, in ms. */
  loopMaxMs: number;
  loopP99Ms: number;
  /** The other keys' p99 latency without an advance, and during one, in ms, and their ratio. */
  othersP99Ms: { without: number; during: number; ratio: number };
}

const ADMIN = 'bench-admin-token-0123456789abcdef';

export async function measureAdvance(mode: string, env: Record<string, string>): Promise<AdvanceFigures> {
  const file = sqliteFile();
  const service = await startService({ ...env, DATABASE_URL: file, EVENT_LOOP_RESOLUTION_MS: '1', ADMIN_TOKEN: ADMIN });
  try {
    const create = (body: object) => createKey(service.adminUrl!, body);
    const key = await create({ plan: 'enterprise', perMinute: 1_000_000, perDay: 100_000_000, test: true });
    const others = await Promise.all(
      Array.from({ length: ADVANCE_BENCH.otherKeys }, () => create({ plan: 'business' })),
    );
    const send = (path: string, method = 'POST', body?: object) =>
      fetch(`${service.url}${path}`, {
        method,
        headers: { 'x-api-key': key, ...(body ? { 'content-type': 'application/json' } : {}) },
        body: body && JSON.stringify(body),
      });
    await send('/webhook-endpoints', 'POST', { url: 'http://127.0.0.1:9/refuses' });
    await load(
      service.url,
      [
        {
          method: 'POST',
          path: '/store/orders',
          headers: { 'x-api-key': key, 'content-type': 'application/json' },
          body: '{"petId":1}',
        },
      ],
      {
        amount: ADVANCE_BENCH.pendingOrders,
      },
    );
    const pets = others.map((other) => ({ method: 'GET' as const, path: '/pets/1', headers: { 'x-api-key': other } }));
    const without = await load(service.url, pets, { seconds: ADVANCE_BENCH.seconds, rate: ADVANCE_BENCH.otherRate });
    await loop(service.adminUrl!);
    const during = load(service.url, pets, { seconds: ADVANCE_BENCH.seconds, rate: ADVANCE_BENCH.otherRate });
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const started = performance.now();
    const answer = await send('/test-clock/advance', 'POST', { seconds: ADVANCE_BENCH.advanceSeconds });
    const answerSeconds = round((performance.now() - started) / 1000, 2);
    if (!answer.ok) throw new Error(`advance answered ${answer.status}`);
    const { p99 } = await during;
    const { maxMs, p99Ms } = await loop(service.adminUrl!);
    const figures: AdvanceFigures = {
      pendingOrders: ADVANCE_BENCH.pendingOrders,
      answerSeconds,
      loopMaxMs: round(maxMs, 1),
      loopP99Ms: round(p99Ms, 1),
      othersP99Ms: { without: without.p99, during: p99, ratio: round(p99 / without.p99, 2) },
    };
    process.stderr.write(`  ${mode}: ${advanceLine(figures)}\n`);
    return figures;
  } finally {
    await service.stop();
    rmSync(dirname(file), { recursive: true, force: true });
  }
}

export function advanceLine(f: AdvanceFigures): string {
  return `a test key with ${f.pendingOrders} pending orders and a refusing endpoint advanced a year: answered in ${f.answerSeconds} s, event loop p99 ${f.loopP99Ms} ms (longest ${f.loopMaxMs} ms); other keys at ${ADVANCE_BENCH.otherRate}/s: p99 ${f.othersP99Ms.during} ms against ${f.othersP99Ms.without} ms without (${f.othersP99Ms.ratio}×)`;
}

/** A key made through the admin API; its full key. */
async function createKey(adminUrl: string, body: object): Promise<string> {
  const response = await fetch(`${adminUrl}/admin/keys`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return ((await response.json()) as { key: string }).key;
}

/** The event loop since the last reading (prom-client resets it at each): its longest block and p99 delay, in ms. */
async function loop(adminUrl: string): Promise<{ maxMs: number; p99Ms: number }> {
  const text = await (await fetch(`${adminUrl}/metrics`, { headers: { authorization: `Bearer ${ADMIN}` } })).text();
  const value = (name: string) => Number(new RegExp(`^${name} ([\\d.e+-]+)$`, 'm').exec(text)?.[1] ?? 0) * 1000;
  return {
    maxMs: value('petstore_nodejs_eventloop_lag_max_seconds'),
    p99Ms: value('petstore_nodejs_eventloop_lag_p99_seconds'),
  };
}

/** autocannon: `amount` requests as fast as they go, or `seconds` at `rate` a second; the p99 latency in ms. */
async function load(
  url: string,
  requests: autocannon.Request[],
  { amount, seconds, rate }: { amount?: number; seconds?: number; rate?: number },
) {
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    autocannon(
      {
        url,
        connections: 20,
        requests,
        ...(amount ? { amount } : { duration: seconds }),
        ...(rate ? { overallRate: rate } : {}),
        timeout: 10,
      },
      (error, result) => (error ? reject(error) : resolve(result)),
    );
  });
  return { p99: result.latency.p99 };
}
