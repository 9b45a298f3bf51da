/**
 * The processes a benchmark drives: the real service from the `tsc` build (`dist/main.js`, what
 * `npm start` runs, so the numbers are production's) and a bare `node:http` baseline.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from '../test/helpers/process.js';

export const ROOT = new URL('../', import.meta.url).pathname;

export interface Proc {
  url: string;
  /** The service's admin listener (`/healthz`, `/metrics`); unset for the baseline. */
  adminUrl?: string;
  /** CPU time (user + system) the process has used so far, in ms; NaN where /proc is missing. */
  cpuMs(): number;
  stop(): Promise<number | null>;
}

/** Starts the built service on free ports; `BENCH_PROFILE=dir` writes a V8 CPU profile there on exit. */
export async function startService(env: Record<string, string>): Promise<Proc> {
  const [port, adminPort] = [await freePort(), await freePort()];
  const profile = process.env.BENCH_PROFILE ? ['--cpu-prof', '--cpu-prof-dir', process.env.BENCH_PROFILE] : [];
  const baseEnv = { HOST: '127.0.0.1', PORT: String(port), ADMIN_PORT: String(adminPort), LOG_LEVEL: 'warn', DEMO_KEYS: 'false' };
  const args = [...profile, join(ROOT, 'dist/main.js')];
  const proc = spawnProc(args, { ...baseEnv, ...env }, `http://127.0.0.1:${port}`);
  const adminUrl = `http://127.0.0.1:${adminPort}`;
  await proc.ready(`${adminUrl}/healthz`);
  return { url: proc.url, adminUrl, cpuMs: proc.cpuMs, stop: proc.stop };
}

/** The baseline in a process of its own, answering every request with `body`. */
export async function startBaseline(body: string): Promise<Proc> {
  const port = await freePort();
  const proc = spawnProc(['--import', 'tsx', join(ROOT, 'bench/baseline.ts')], { PORT: String(port), BODY: body }, `http://127.0.0.1:${port}`);
  await proc.ready(`${proc.url}/`);
  return { url: proc.url, cpuMs: proc.cpuMs, stop: proc.stop };
}

function spawnProc(args: string[], env: Record<string, string>, url: string) {
  // A clean environment: nothing from the caller's shell (REDIS_URL, BAN_*, …) may change a mode.
  const child = spawn(process.execPath, args, { env: { PATH: process.env.PATH, ...env }, cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  // Kept short and always read, so that a chatty child never blocks on a full pipe.
  let output = '';
  const keep = (d: Buffer) => (output = (output + d.toString()).slice(-4000));
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return {
    url,
    cpuMs: () => cpuMsOf(child.pid),
    async ready(probe: string): Promise<void> {
      const deadline = Date.now() + 20_000;
      while (!(await fetch(probe).then((r) => r.ok, () => false))) {
        if (child.exitCode !== null || Date.now() > deadline) {
          child.kill('SIGKILL');
          throw new Error(`${args.at(-1)} did not start: ${output}`);
        }
        await new Promise((r) => setTimeout(r, 100));
      }
    },
    async stop(): Promise<number | null> {
      if (child.exitCode === null) child.kill('SIGTERM');
      const code = await exited;
      if (code !== 0) process.stderr.write(`${args.at(-1)} exited ${code}: ${output}\n`);
      return code;
    },
  };
}

/** utime + stime of a process, from /proc/<pid>/stat (in clock ticks, 100 per second on Linux). */
function cpuMsOf(pid: number | undefined): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return NaN;
  }
}
