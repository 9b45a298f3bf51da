import { spawn } from 'node:child_process';

/** The lines of output kept to show with a failure. */
export const TAIL_LINES = 20;
/** How long a command has to stop after `SIGTERM` before it is killed. */
const KILL_AFTER_MS = 5_000;
/** The line a command prints when its webhook receiver is ready to be examined. */
export const READY_LINE = 'PETSTORE_READY';

/** How a command ended. */
export interface Ending {
  /** Its exit code, or null when a signal ended it. */
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Whether the runner ended it: its time ran out. */
  timedOut: boolean;
  /** The runner's own `SIGTERM` (after a receiver's exam). */
  stopped: boolean;
  /** Its last lines of output (standard output and error, as they came). */
  tail: string[];
}

/** A command under way, run through the shell in a process group of its own. */
export interface Running {
  /** Resolves once it printed `PETSTORE_READY`, or with false once it ended without. */
  ready: Promise<boolean>;
  ended: Promise<Ending>;
  /** `SIGTERM` to its process group (and `SIGKILL` if it is still there later). */
  stop(): void;
  /** Ends it at once (the run was interrupted). */
  kill(): void;
}

/**
 * Runs `command` through the shell (`sh -c`), with `env`, for at most `timeoutMs`. Its whole process group is
 * signalled, so that what the shell started stops with it.
 */
export function runCommand(command: string, env: NodeJS.ProcessEnv, timeoutMs: number): Running {
  const child = spawn('/bin/sh', ['-c', command], { env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  const tail: string[] = [];
  let partial = { out: '', err: '' };
  let timedOut = false;
  let stopped = false;
  let markReady: (ready: boolean) => void = () => undefined;
  const ready = new Promise<boolean>((resolve) => (markReady = resolve));

  const signal = (name: NodeJS.Signals) => {
    try {
      if (child.pid !== undefined) process.kill(-child.pid, name);
    } catch {
      // Already gone.
    }
  };
  const lines = (stream: 'out' | 'err') => (chunk: Buffer) => {
    const text = partial[stream] + chunk.toString('utf8');
    const split = text.split(/\r?\n/);
    partial = { ...partial, [stream]: split.pop() ?? '' };
    for (const line of split) {
      if (stream === 'out' && line.trim() === READY_LINE) markReady(true);
      tail.push(line);
      if (tail.length > TAIL_LINES) tail.shift();
    }
  };
  child.stdout.on('data', lines('out'));
  child.stderr.on('data', lines('err'));

  let killTimer: NodeJS.Timeout | undefined;
  const stop = () => {
    signal('SIGTERM');
    killTimer ??= setTimeout(() => signal('SIGKILL'), KILL_AFTER_MS);
  };
  const timer = setTimeout(() => {
    timedOut = true;
    stop();
  }, timeoutMs);

  const ended = new Promise<Ending>((resolve) => {
    child.on('error', (error) => {
      tail.push(`could not start the command: ${error.message}`);
    });
    child.on('close', (code, sig) => {
      clearTimeout(timer);
      clearTimeout(killTimer);
      for (const rest of [partial.out, partial.err]) if (rest) tail.push(rest);
      while (tail.length > TAIL_LINES) tail.shift();
      markReady(false);
      resolve({ code, signal: sig, timedOut, stopped, tail });
    });
  });
  return {
    ready,
    ended,
    stop() {
      stopped = true;
      stop();
    },
    kill: () => signal('SIGKILL'),
  };
}

/**
 * Whether a command ended cleanly: exit code 0, or, when the runner stopped it, by that `SIGTERM` (the shell
 * reports a command it ran that the signal ended as 128 + 15).
 */
export function endedCleanly(ending: Ending): boolean {
  if (ending.timedOut) return false;
  if (ending.code === 0) return true;
  return ending.stopped && (ending.signal === 'SIGTERM' || ending.code === 143);
}

/** How a command ended, in words. */
export function endingInWords(ending: Ending, timeoutMs: number): string {
  if (ending.timedOut) return `the command did not finish within ${timeoutMs / 1000} s`;
  if (ending.signal) return `the command was ended by ${ending.signal}`;
  return `the command exited with code ${ending.code}`;
}
