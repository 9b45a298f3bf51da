/**
 * Redis for the suites. Outside CI a missing Redis skips the suites that need it, with the reason
 * printed; in CI (CI=true) it fails them, so that a broken CI setup cannot pass by skipping.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { portIsFree } from './process.js';
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

/** Whether a Redis Cluster can be started here (`redis-server` and `redis-cli`, see scripts/redis-cluster.ts). */
export function redisClusterInstalled(): boolean {
  for (const tool of ['redis-server', 'redis-cli']) {
    if (spawnSync(tool, ['--version']).error !== undefined) {
      unavailable(`${tool} is not installed (a Redis Cluster needs it)`);
      return false;
    }
  }
  return true;
}

/** Six free ports in a row, and the cluster bus's six (each port + 10000), for a throwaway cluster. */
export async function freeClusterPorts(): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const first = 20_000 + Math.floor(Math.random() * 9_000);
    const ports = Array.from({ length: 6 }, (_, i) => first + i).flatMap((p) => [p, p + 10_000]);
    if ((await Promise.all(ports.map(portIsFree))).every(Boolean)) return first;
  }
  throw new Error('no six free ports in a row for a Redis Cluster');
}

export interface RedisServer {
  url: string;
  /** Kills the server outright (SIGKILL): no shutdown, no save, connections reset. */
  kill(): Promise<void>;
}

/** A throwaway redis-server on `port`, without persistence, ready to answer. */
export async function startRedisServer(port: number): Promise<RedisServer> {
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    {
      stdio: 'ignore',
    },
  );
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
  const probe = new Redis(url, {
    lazyConnect: true,
    connectTimeout: 1000,
    retryStrategy: () => null,
    maxRetriesPerRequest: 0,
  });
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

/**
 * A verdict (or anything a store answers) without the stamp only the
 * Redis store's verdicts carry: to compare them with the memory store's.
 */
export function unstamped<T>(answer: T): T {
  if (answer === null || typeof answer !== 'object' || !('stamp' in answer)) return answer;
  const { stamp: _, ...rest } = answer as T & { stamp: unknown };
  return rest as T;
}

/** Deletes every key that starts with `prefix` (a suite's own keys, at its end). */
export async function unlinkAll(admin: Redis, prefix: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await admin.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    if (keys.length > 0) await admin.unlink(...keys);
    cursor = next;
  } while (cursor !== '0');
}
