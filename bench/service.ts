/**
 * The processes a benchmark drives: the real service from the `tsc` build (`dist/main.js`, what
 * `npm start` runs, so the numbers are production's), a bare `node:http` baseline, and the peers
 * (plain Fastify with @fastify/rate-limit, bench/peer.ts).
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from '../test/helpers/process.js';

export const ROOT = new URL('../', import.meta.url).pathname;

export interface Proc {
  url: string;
  /** The process id, to signal it (bench/collect-on-signal.mjs). */
  pid: number | undefined;
  /** The service's admin listener (`/healthz`, `/metrics`); unset for the baseline and the peers. */
  adminUrl?: string;
  /** The environment the service was started with (beyond the ports): another one like it can be started. */
  env?: Record<string, string>;
  /** CPU time (user + system) the process has used so far, in ms; NaN where /proc is missing. */
  cpuMs(): number;
  /** Resident set size now, in bytes (VmRSS in /proc/<pid>/status); NaN where /proc is missing. */
  rssBytes(): number;
  stop(): Promise<number | null>;
}

/**
 * Starts the built service (`main`: another build's, for bench/ab.ts) on
 * free ports; `BENCH_PROFILE=dir` writes a V8 CPU profile there on exit.
 */
export async function startService(env: Record<string, string>, main = join(ROOT, 'dist/main.js')): Promise<Proc> {
  const [port, adminPort] = [await freePort(), await freePort()];
  const profile = process.env.BENCH_PROFILE ? ['--cpu-prof', '--cpu-prof-dir', process.env.BENCH_PROFILE] : [];
  // autocannon's connections all come from one address: BENCH_CONNECTIONS may exceed the default allowance.
  const baseEnv = {
    HOST: '127.0.0.1',
    PORT: String(port),
    ADMIN_PORT: String(adminPort),
    LOG_LEVEL: 'warn',
    DEMO_KEYS: 'false',
    MAX_CONNECTIONS_PER_ADDRESS: '100000',
  };
  const args = [...profile, main];
  const proc = spawnProc(args, { ...baseEnv, ...env }, `http://127.0.0.1:${port}`);
  const adminUrl = `http://127.0.0.1:${adminPort}`;
  await proc.ready(`${adminUrl}/healthz`);
  return { url: proc.url, pid: proc.pid, adminUrl, env, cpuMs: proc.cpuMs, rssBytes: proc.rssBytes, stop: proc.stop };
}

/**
 * The baseline in a process of its own, answering every request
 * with `body` (and `headers` and `status`, when given: a floor).
 */
export async function startBaseline(body: string, headers?: Record<string, string>, status = 200): Promise<Proc> {
  const port = await freePort();
  const env = {
    PORT: String(port),
    BODY: body,
    STATUS: String(status),
    ...(headers ? { HEADERS: JSON.stringify(headers) } : {}),
  };
  const proc = spawnProc(['--import', 'tsx', join(ROOT, 'bench/baseline.ts')], env, `http://127.0.0.1:${port}`);
  await proc.ready(`${proc.url}/`, true);
  return { url: proc.url, pid: proc.pid, cpuMs: proc.cpuMs, rssBytes: proc.rssBytes, stop: proc.stop };
}

/**
 * A peer (bench/peer.ts) in a process of its own, answering `GET /pets/:petId` with `body`:
 * @fastify/rate-limit's in-memory store, or its Redis store on `redisUrl` under a key prefix of its own;
 * with `databaseUrl`, the store's orders too, over the service's tables there; with `headers`, the service's
 * own answer's headers on every answer.
 */
export async function startPeer(
  body: string,
  store: { redisUrl: string; nameSpace: string; databaseUrl?: string } | null,
  headers?: Record<string, string>,
): Promise<Proc> {
  const port = await freePort();
  const env = {
    PORT: String(port),
    BODY: body,
    ...(headers ? { HEADERS: JSON.stringify(headers) } : {}),
    ...(store ? { PEER_REDIS_URL: store.redisUrl, PEER_NAMESPACE: store.nameSpace } : {}),
    ...(store?.databaseUrl ? { PEER_DATABASE_URL: store.databaseUrl } : {}),
  };
  const profile = process.env.BENCH_PROFILE ? ['--cpu-prof', '--cpu-prof-dir', process.env.BENCH_PROFILE] : [];
  const proc = spawnProc([...profile, '--import', 'tsx', join(ROOT, 'bench/peer.ts')], env, `http://127.0.0.1:${port}`);
  await proc.ready(`${proc.url}/pets/1`);
  return { url: proc.url, pid: proc.pid, cpuMs: proc.cpuMs, rssBytes: proc.rssBytes, stop: proc.stop };
}

/** How much of a child's output is kept, to explain a failure. */
const OUTPUT_KEPT = 4000;

function spawnProc(args: string[], env: Record<string, string>, url: string) {
  // A clean environment: nothing from the caller's shell (REDIS_URL, BAN_*, …) may change a mode.
  const child = spawn(process.execPath, args, {
    env: { PATH: process.env.PATH, ...env },
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // Always read, so that a chatty child never blocks on a full pipe: at LOG_LEVEL=info the service
  // writes an access-log line per request, megabytes a second. Reading it must cost the bench (which
  // shares the cores with it) next to nothing: the chunks are kept as they come, only the last few KB
  // of them, and decoded only if the child fails. The service keeps writing to a pipe that is read, as
  // it would to a log collector, rather than to /dev/null (stdio 'ignore'), which would flatter it.
  const tail: Buffer[] = [];
  let tailBytes = 0;
  const keep = (chunk: Buffer) => {
    tail.push(chunk);
    tailBytes += chunk.length;
    while (tail.length > 1 && tailBytes - tail[0]!.length >= OUTPUT_KEPT) tailBytes -= tail.shift()!.length;
  };
  const output = () => Buffer.concat(tail).toString().slice(-OUTPUT_KEPT);
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return {
    url,
    pid: child.pid,
    cpuMs: () => cpuMsOf(child.pid),
    rssBytes: () => rssBytesOf(child.pid),
    /** Until `probe` answers 2xx (or anything at all, with `anyStatus`: a refusal's floor answers 429). */
    async ready(probe: string, anyStatus = false): Promise<void> {
      const deadline = Date.now() + 20_000;
      while (
        !(await fetch(probe).then(
          (r) => r.ok || anyStatus,
          () => false,
        ))
      ) {
        if (child.exitCode !== null || Date.now() > deadline) {
          child.kill('SIGKILL');
          throw new Error(`${args.at(-1)} did not start: ${output()}`);
        }
        await new Promise((r) => setTimeout(r, 100));
      }
    },
    async stop(): Promise<number | null> {
      if (child.exitCode === null) child.kill('SIGTERM');
      const code = await exited;
      if (code !== 0) process.stderr.write(`${args.at(-1)} exited ${code}: ${output()}\n`);
      return code;
    },
  };
}

/** /proc counts CPU time in ticks of USER_HZ, 100 a second on Linux. */
const TICK_MS = 10;

/**
 * CPU time all cores have spent busy (user, nice, system, irq, softirq) since
 * boot, in ms: the load generator and Redis too; NaN where /proc is missing.
 */
export function machineBusyMs(): number {
  try {
    const [user, nice, system, , , irq, softirq] = readFileSync('/proc/stat', 'utf8')
      .split('\n', 1)[0]!
      .trim()
      .split(/\s+/)
      .slice(1)
      .map(Number);
    return (user! + nice! + system! + irq! + softirq!) * TICK_MS;
  } catch {
    return NaN;
  }
}

/** utime + stime of a process, from /proc/<pid>/stat, in ms. */
function cpuMsOf(pid: number | undefined): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
  } catch {
    return NaN;
  }
}

/** VmRSS of a process, from /proc/<pid>/status (in kB there). */
function rssBytesOf(pid: number | undefined): number {
  try {
    const kb = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kb === undefined ? NaN : Number(kb) * 1024;
  } catch {
    return NaN;
  }
}
