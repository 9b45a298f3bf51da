import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { systemClock } from '../../src/clock.js';
import { runCommandLine } from '../../src/command-line.js';

export const ROOT = new URL('../../', import.meta.url).pathname;
/**
 * The service and the CLI run from the build (`dist/`, what `npm start` runs), made once per run by
 * the projects' global set-up (../setup/build.ts): a process starts in a fraction of what compiling its
 * TypeScript at each start would cost.
 */
export const BUILT = { service: join(ROOT, 'dist/main.js'), cli: join(ROOT, 'dist/cli.js') } as const;
// Node itself with tsx's loader, for a test's own TypeScript fixture. The loader by absolute URL: a
// fixture may run in a folder of its own, where 'tsx' would not resolve.
const TSX_LOADER = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
export const NODE_TS = [process.execPath, ['--import', TSX_LOADER]] as const;

export function tempDir(): string {
  return mkdtempSync(join(tmpdir(), 'petstore-test-'));
}

/**
 * A port a child process of a test may listen on: from 10,000 to 19,999, below the kernel's ephemeral
 * range (32,768 and up here). A port the kernel gave to `listen(0)` and took back is the kernel's to
 * give again, to any outgoing connection of any test, before the child binds it (a Prism proxy once
 * found its port taken so). Below the range only another test's choice could take it: chosen at
 * random, and checked free.
 */
export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 100; attempt++) {
    const port = 10_000 + Math.floor(Math.random() * 10_000);
    if (await portIsFree(port)) return port;
  }
  throw new Error('no free port between 10,000 and 19,999');
}

/** Whether nothing listens on `port` of 127.0.0.1 now. */
export function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the built service or CLI (`BUILT`) in its own Node process and waits for it to exit. */
export function runBuilt(script: string, args: string[], env: Record<string, string>): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [script, ...args], { env: { ...process.env, ...env }, cwd: ROOT });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

/**
 * `petstore …` as an operator runs it (src/command-line.ts), here in this process, on the store that
 * `env` names through a connection of its own: what it printed, and its exit code.
 */
export async function cli(args: string[], env: Record<string, string>): Promise<Run> {
  let stdout = '';
  let stderr = '';
  const code = await runCommandLine(args, {
    env,
    clock: systemClock,
    stdout: (text) => (stdout += text),
    stderr: (text) => (stderr += text),
  });
  return { code, stdout, stderr };
}

export interface Server {
  child: ChildProcess;
  output: () => string;
  url: string;
  adminUrl: string;
  /** Resolves when the process exits: its exit code, or the signal that ended it. */
  exited: Promise<number | NodeJS.Signals | null>;
  stop(signal?: NodeJS.Signals): Promise<number | NodeJS.Signals | null>;
}

/** A demo key the service printed at start (its `free` or `test` line), from its output. */
export function demoKey(server: Pick<Server, 'output'>, plan: 'free' | 'test'): string {
  const line = new RegExp(`^ {2}${plan} +(pet_${plan === 'test' ? 'test_' : ''}[A-Za-z0-9_-]{32})$`, 'm').exec(
    server.output(),
  );
  if (!line) throw new Error(`no ${plan} demo key in the service's output`);
  return line[1]!;
}

/** Starts the real service (its build, `BUILT.service`) on free ports and waits until both listeners answer. */
export async function startServer(env: Record<string, string>, cwd = ROOT): Promise<Server> {
  const port = await freePort();
  const adminPort = await freePort();
  const child = spawn(process.execPath, [BUILT.service], {
    env: {
      ...process.env,
      HOST: '127.0.0.1',
      PORT: String(port),
      ADMIN_PORT: String(adminPort),
      LOG_LEVEL: 'warn',
      ...env,
    },
    cwd,
  });
  let output = '';
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  const exited = new Promise<number | NodeJS.Signals | null>((resolve) =>
    child.on('exit', (code, signal) => resolve(code ?? signal)),
  );
  const url = `http://127.0.0.1:${port}`;
  const adminUrl = `http://127.0.0.1:${adminPort}`;
  const deadline = Date.now() + 20_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`server exited: ${output}`);
    const up = await fetch(`${adminUrl}/healthz`).then(
      (r) => r.ok,
      () => false,
    );
    if (up) break;
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`server did not start: ${output}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    child,
    output: () => output,
    url,
    adminUrl,
    exited,
    stop: async (signal = 'SIGTERM') => {
      if (child.exitCode === null) child.kill(signal);
      return exited;
    },
  };
}
