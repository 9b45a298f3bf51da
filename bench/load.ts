/**
 * One measurement: autocannon against one target, a warm-up first (the JIT, the connections), then
 * the measured run, with the same settings.
 */
import autocannon from 'autocannon';
import { machineBusyMs } from './service.js';

export interface LoadSettings {
  connections: number;
  seconds: number;
  warmupSeconds: number;
}

export interface Measured {
  rps: number;
  /** req/s in the run's last whole second: below `rps` when a path slows down as state grows. */
  rpsLastSecond: number;
  /** Latencies in ms, from our own sub-millisecond samples (autocannon's histogram is whole ms). */
  p50: number;
  p99: number;
  requests: number;
  statuses: Record<string, number>;
  /** Connection errors, timeouts and resets: all three should be 0. */
  errors: number;
  timeouts: number;
  resets: number;
  /** CPU time the server spent per answered request, in µs: less sensitive than req/s to a busy machine. */
  cpuUsPerRequest: number;
}

export type Requests = autocannon.Request[];

export interface Target {
  url: string;
  cpuMs(): number;
}

/**
 * One request template whose `x-api-key` header takes the next of `keys` at every request sent, over
 * all connections together: a run then spreads over every key evenly. (A list of requests would not:
 * autocannon starts each connection at the head of the list, and copies the whole list per connection.)
 */
export function spread(path: string, keys: readonly string[]): Requests {
  let next = 0;
  return [
    {
      method: 'GET',
      path,
      setupRequest: (request) => {
        request.headers = { ...request.headers, 'x-api-key': keys[next++ % keys.length]! };
        return request;
      },
    },
  ];
}

/** The request `i` of a run, as it would be sent (a `spread` template takes its next key). */
export function nth(
  requests: Requests,
  i: number,
): { method: string; path: string; headers: Record<string, string>; body?: string } {
  const template = requests[i % requests.length]!;
  const request =
    typeof template.setupRequest === 'function'
      ? template.setupRequest({ ...template, headers: { ...template.headers } }, {})
      : template;
  return {
    method: request.method ?? 'GET',
    path: request.path ?? '/',
    headers: (request.headers ?? {}) as Record<string, string>,
    body: request.body as string | undefined,
  };
}

/**
 * `n` requests sent one at a time (nothing else in flight): for counting what each one costs elsewhere,
 * and, with `n` the list's length, for a row's untimed first pass (bench/mode-run.ts): autocannon walks a
 * list in step on every connection, so without it the first pass would send each new key's requests
 * all at once, each waiting for that key's one read, and the run would time the cache filling.
 */
export async function oneAtATime(url: string, requests: Requests, n: number): Promise<Record<string, number>> {
  const statuses: Record<string, number> = {};
  for (let i = 0; i < n; i++) {
    const { method, path, headers, body } = nth(requests, i);
    const response = await fetch(`${url}${path}`, { method, headers, body });
    await response.arrayBuffer();
    statuses[response.status] = (statuses[response.status] ?? 0) + 1;
  }
  return statuses;
}

/** Exactly `amount` requests over `connections`, as fast as they are answered; untimed set-up work. */
export async function sendAll(
  url: string,
  requests: Requests,
  amount: number,
  connections: number,
): Promise<{ seconds: number; statuses: Record<string, number>; errors: number }> {
  const statuses: Record<string, number> = {};
  const started = performance.now();
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    const instance = autocannon({ url, connections, amount, requests, timeout: 10 }, (error, result) =>
      error ? reject(error) : resolve(result),
    );
    instance.on('response', (_client, status) => (statuses[status] = (statuses[status] ?? 0) + 1));
  });
  return { seconds: (performance.now() - started) / 1000, statuses, errors: result.errors + result.timeouts };
}

export async function measure(target: Target, requests: Requests, settings: LoadSettings): Promise<Measured> {
  await run(target.url, requests, settings.connections, settings.warmupSeconds);
  const cpuBefore = target.cpuMs();
  const measured = await run(target.url, requests, settings.connections, settings.seconds);
  return { ...measured, cpuUsPerRequest: Math.round(usPerRequest(target.cpuMs() - cpuBefore, measured.requests)) };
}

/**
 * Two warm targets measured by turns on the same requests, or
 * each on its own (a, b, a, b…, `seconds` each, `rounds` times):
 * each round's req/s of `b` over `a`, and their median. Measured apart, a minute or more between them,
 * the two figures also differ by the machine's own drift (large on a shared two-core machine); by
 * turns, both see the same machine. With them, the median over the rounds of each target's CPU µs per
 * request, and of the whole machine's (its busy time in /proc/stat: the load generator and Redis too).
 * `before`, when given, is awaited ahead of each turn, untimed: it sets the side's scene (one service with
 * something open for `b` and closed for `a`, say).
 */
export async function byTurns(
  a: Target,
  b: Target,
  requests: Requests | { a: Requests; b: Requests },
  connections: number,
  rounds: number,
  seconds: number,
  before?: (side: 'a' | 'b') => Promise<void>,
): Promise<ByTurns> {
  const sides = Array.isArray(requests) ? { a: requests, b: requests } : requests;
  const ratios: number[] = [];
  const rps = { a: [] as number[], b: [] as number[] };
  const cpu = { a: [] as number[], b: [] as number[] };
  const machine = { a: [] as number[], b: [] as number[] };
  const statuses = { a: {} as Record<string, number>, b: {} as Record<string, number> };
  const turn = async (target: Target, side: 'a' | 'b') => {
    await before?.(side);
    const [cpuBefore, busyBefore] = [target.cpuMs(), machineBusyMs()];
    const result = await run(target.url, sides[side], connections, seconds);
    cpu[side].push(usPerRequest(target.cpuMs() - cpuBefore, result.requests));
    machine[side].push(usPerRequest(machineBusyMs() - busyBefore, result.requests));
    for (const [status, n] of Object.entries(result.statuses))
      statuses[side][status] = (statuses[side][status] ?? 0) + n;
    return result;
  };
  for (let i = 0; i < rounds; i++) {
    const first = await turn(a, 'a');
    const second = await turn(b, 'b');
    rps.a.push(first.rps);
    rps.b.push(second.rps);
    ratios.push(round(second.rps / first.rps, 3));
  }
  // To a tenth of a µs: two sides a µs apart must not read as equal.
  const micros = (side: { a: number[]; b: number[] }) => ({
    a: round(medianOf(side.a), 1),
    b: round(medianOf(side.b), 1),
  });
  return {
    ratios,
    median: round(medianOf(ratios), 3),
    rps,
    cpuUsPerRequest: micros(cpu),
    machineUsPerRequest: micros(machine),
    statuses,
  };
}

export interface ByTurns {
  /** Each round's req/s of the second target over the first. */
  ratios: number[];
  median: number;
  /** Each round's req/s of each target. */
  rps: { a: number[]; b: number[] };
  /** The median over the rounds of the CPU µs per answered request: each target's own, and the whole machine's. */
  cpuUsPerRequest: { a: number; b: number };
  /** How each target answered, over all its turns. */
  statuses: { a: Record<string, number>; b: Record<string, number> };
  machineUsPerRequest: { a: number; b: number };
}

/** CPU ms spent over `requests` answered, as µs per request. */
function usPerRequest(cpuMs: number, requests: number): number {
  return (cpuMs * 1000) / requests;
}

export function medianOf(values: readonly number[]): number {
  const sorted = [...values].sort((x, y) => x - y);
  const middle = sorted.length / 2;
  return sorted.length % 2 ? sorted[Math.floor(middle)]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

async function run(
  url: string,
  requests: Requests,
  connections: number,
  seconds: number,
): Promise<Omit<Measured, 'cpuUsPerRequest'>> {
  const samples: number[] = [];
  const finished: number[] = [];
  const statuses: Record<string, number> = {};
  const started = performance.now();
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    const instance = autocannon({ url, connections, duration: seconds, requests, timeout: 10 }, (error, result) =>
      error ? reject(error) : resolve(result),
    );
    instance.on('response', (_client, status, _bytes, ms) => {
      samples.push(ms);
      finished.push(performance.now() - started);
      statuses[status] = (statuses[status] ?? 0) + 1;
    });
  });
  samples.sort((a, b) => a - b);
  const at = (q: number) => round(samples[Math.min(samples.length - 1, Math.floor(q * samples.length))] ?? NaN, 2);
  const lastSecond = Math.floor(seconds) - 1;
  return {
    rps: Math.round(samples.length / result.duration),
    rpsLastSecond: finished.filter((t) => t >= lastSecond * 1000 && t < (lastSecond + 1) * 1000).length,
    p50: at(0.5),
    p99: at(0.99),
    requests: samples.length,
    statuses,
    errors: result.errors,
    timeouts: result.timeouts,
    resets: result.resets,
  };
}

export function round(n: number, digits: number): number {
  return Math.round(n * 10 ** digits) / 10 ** digits;
}
