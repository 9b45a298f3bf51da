/**
 * Redis for the suites. Outside CI a missing Redis skips the suites that need it, with the reason
 * printed; in CI (CI=true) it fails them, so that a broken CI setup cannot pass by skipping.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { Redis } from 'ioredis';

/** The shared Redis (TEST_REDIS_URL, default the local one), or null when it is unreachable. */
export async function redisForTests(): Promise<{ url: string } | null> {
  const url = process.env.TEST_REDIS_URL || 'redis://127.0.0.1:6379';
  return (await ping(url)) ? { url } : unavailable(`Redis at ${url} is unreachable`);
}

/** Whether `redis-server` can be started, for suites that need a server of their own to kill. */
export function redisServerInstalled(): boolean {
  if (spawnSync('redis-server', ['--version']).error === undefined) return true;
  unavailable('redis-server is not installed');
  return false;
}

export interface RedisServer {
  url: string;
  /** Kills the server outright (SIGKILL): no shutdown, no save, connections reset. */
  kill(): Promise<void>;
}

/** A throwaway redis-server on `port`, without persistence, ready to answer. */
export async function startRedisServer(port: number): Promise<RedisServer> {
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
    stdio: 'ignore',
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = `redis://127.0.0.1:${port}`;
  const deadline = Date.now() + 5000;
  while (!(await ping(url))) {
    if (child.exitCode !== null || Date.now() > deadline) {
      await kill(child, exited);
      throw new Error(`redis-server did not start on port ${port}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return { url, kill: () => kill(child, exited) };
}

async function kill(child: ChildProcess, exited: Promise<void>): Promise<void> {
  if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await exited;
}

async function ping(url: string): Promise<boolean> {
  const probe = new Redis(url, { lazyConnect: true, connectTimeout: 1000, retryStrategy: () => null, maxRetriesPerRequest: 0 });
  probe.on('error', () => {});
  try {
    await probe.connect();
    return (await probe.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    probe.disconnect();
  }
}

function unavailable(reason: string): null {
  if (process.env.CI === 'true') throw new Error(`${reason}, and CI requires it`);
  console.warn(`Skipping Redis tests: ${reason}.`);
  return null;
}
