/**
 * `npm run bench:flood`: what clients that pipeline and never read can make the service hold, and
 * whether it keeps answering others meanwhile (docs/design.md, "Pipelined requests"). For each
 * scenario, a fresh service (the build, on SQLite); 250 connections from 127.0.0.2 write pipelined
 * `GET /pets/1` and never read, while a client on 127.0.0.3 asks `GET /pets/2` every 50 ms on a new
 * connection. Reported: the service's RSS before and its peak (sampled every 100 ms), and the other
 * client's latencies before and during the flood. Loopback only; `FLOOD_SECONDS` (15) per scenario.
 */
import { request } from 'node:http';
import { connect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { type Proc, startService } from './service.js';
import { createKeys, migratedSqliteFile } from './setup.js';

const CONNECTIONS = 250;
const SECONDS = Number(process.env.FLOOD_SECONDS ?? 15);

interface Scenario {
  name: string;
  path: string;
  /** Requests per write, every 100 ms; unset: 64 KB writes for as long as the socket takes them. */
  perWrite?: number;
  reconnect?: boolean;
  env?: Record<string, string>;
}

const SCENARIOS: Scenario[] = [
  { name: 'one request a key (/pets/1)', path: '/pets/1' },
  { name: 'with a query (/pets/1?)', path: '/pets/1?' },
  { name: '60 requests every 100 ms', path: '/pets/1', perWrite: 60 },
  { name: 'reconnecting 10 ms after each close', path: '/pets/1', reconnect: true },
  { name: 'behind TRUST_PROXY (no per-address guard)', path: '/pets/1', env: { TRUST_PROXY: '127.0.0.1' } },
];

function flood(url: URL, key: string, scenario: Scenario): { stop(): void; connects: () => number } {
  const one = `GET ${scenario.path} HTTP/1.1\r\nHost: ${url.host}\r\nX-API-Key: ${key}\r\n\r\n`;
  const chunk = Buffer.from(one.repeat(scenario.perWrite ?? Math.ceil(65_536 / one.length)));
  let stopped = false;
  let connects = 0;
  const open = (): void => {
    if (stopped) return;
    connects++;
    const socket = connect({ port: Number(url.port), host: url.hostname, localAddress: '127.0.0.2' });
    socket.pause();
    socket.on('error', () => {});
    socket.on('close', () => void (scenario.reconnect && setTimeout(open, 10)));
    if (scenario.perWrite !== undefined) {
      const timer = setInterval(() => (stopped || socket.destroyed ? clearInterval(timer) : socket.write(chunk)), 100);
    } else {
      const pump = () => {
        while (!stopped && socket.write(chunk));
      };
      socket.on('connect', pump).on('drain', pump);
    }
  };
  for (let i = 0; i < CONNECTIONS; i++) open();
  return { stop: () => void (stopped = true), connects: () => connects };
}

/** The other client: one request at a time, each on a new connection, 50 ms apart, until `until` resolves. */
async function probe(url: URL, key: string, until: Promise<void>): Promise<number[]> {
  const latencies: number[] = [];
  let done = false;
  void until.then(() => (done = true));
  while (!done) {
    const started = performance.now();
    await new Promise<void>((resolve) => {
      const req = request(
        {
          host: url.hostname,
          port: url.port,
          path: '/pets/2',
          localAddress: '127.0.0.3',
          agent: false,
          headers: { 'x-api-key': key },
        },
        (res) => {
          res.resume().on('end', resolve);
        },
      );
      req.on('error', () => resolve());
      req.end();
    });
    latencies.push(performance.now() - started);
    await sleep(50);
  }
  return latencies;
}

const quantile = (values: number[], q: number) =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(q * values.length))] ?? NaN;
const mb = (bytes: number) => Math.round(bytes / 2 ** 20);

async function run(scenario: Scenario): Promise<string> {
  const databaseUrl = await migratedSqliteFile();
  const keys = await createKeys(databaseUrl, { perPath: 1, limited: 0 });
  const service: Proc = await startService({
    DATABASE_URL: databaseUrl,
    MAX_CONNECTIONS_PER_ADDRESS: '256',
    ...scenario.env,
  });
  try {
    const url = new URL(service.url);
    const before = await probe(url, keys.placeOrders[0]!, sleep(4_000));
    const rssBefore = service.rssBytes();
    let peak = rssBefore;
    const sampler = setInterval(() => (peak = Math.max(peak, service.rssBytes())), 100);
    const attack = flood(url, keys.pets[0]!, scenario);
    const during = await probe(url, keys.placeOrders[0]!, sleep(SECONDS * 1000));
    attack.stop();
    clearInterval(sampler);
    const ms = (v: number) => v.toFixed(1);
    return `| ${scenario.name} | ${attack.connects()} | ${mb(rssBefore)} → ${mb(peak)} (+${mb(peak - rssBefore)}) | ${ms(quantile(before, 0.99))} | ${ms(quantile(during, 0.5))} | ${ms(quantile(during, 0.99))} | ${ms(Math.max(...during))} |`;
  } finally {
    await service.stop();
  }
}

console.log('| flood | connections | RSS MB | other client p99 before, ms | p50 during | p99 during | max during |');
console.log('|---|---|---|---|---|---|---|');
for (const scenario of SCENARIOS) console.log(await run(scenario));
process.exit(0);
