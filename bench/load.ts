/**
 * One measurement: autocannon against one target, a warm-up first (the JIT, the connections), then
 * the measured run, with the same settings.
 */
import autocannon from 'autocannon';

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

export async function measure(target: Target, requests: Requests, settings: LoadSettings): Promise<Measured> {
  await run(target.url, requests, settings.connections, settings.warmupSeconds);
  const cpuBefore = target.cpuMs();
  const measured = await run(target.url, requests, settings.connections, settings.seconds);
  return { ...measured, cpuUsPerRequest: Math.round(((target.cpuMs() - cpuBefore) * 1000) / measured.requests) };
}

async function run(url: string, requests: Requests, connections: number, seconds: number): Promise<Omit<Measured, 'cpuUsPerRequest'>> {
  const samples: number[] = [];
  const finished: number[] = [];
  const statuses: Record<string, number> = {};
  const started = performance.now();
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    const instance = autocannon({ url, connections, duration: seconds, requests, timeout: 10 }, (error, result) => (error ? reject(error) : resolve(result)));
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
