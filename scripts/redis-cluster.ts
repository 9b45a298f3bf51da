/**
 * A real Redis Cluster on this machine: three primaries and three replicas, each a `redis-server
 * --cluster-enabled yes` without persistence, joined by `redis-cli --cluster create`. What the tests
 * and the bench run the limiter on, and what the commands of docs/scaling.md#on-a-redis-cluster do by hand.
 *
 *   npx tsx scripts/redis-cluster.ts [first port, default 7000]   # runs until Ctrl-C
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const cli = (port: number, ...args: string[]) =>
  run('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...args], { timeout: 10_000 });

export interface ClusterNode {
  port: number;
  /** Kills the node outright (SIGKILL): no shutdown, connections reset. */
  kill(): Promise<void>;
}

export interface RedisCluster {
  /** `host:port,…` of every node: the value of REDIS_CLUSTER_NODES. */
  nodesVariable: string;
  nodes: ClusterNode[];
  /** The port of the primary that serves `key`'s slot now. */
  primaryOf(key: string): Promise<number>;
  /**
   * Waits until every slot is served by a primary that answers (`cluster_state:ok`
   * on every live node) and every live replica is in sync with its primary.
   */
  healthy(timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

/** How long a node may be silent before the others fail it over: short, so a failover takes about a second. */
const NODE_TIMEOUT_MS = 1_000;

export async function startRedisCluster(firstPort: number): Promise<RedisCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'petstore-redis-cluster-'));
  const ports = Array.from({ length: 6 }, (_, i) => firstPort + i);
  const children = new Map(ports.map((port) => [port, startNode(port, dir)] as const));
  const kill = async (port: number) => {
    const { child, exited } = children.get(port)!;
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  };
  const stop = async () => {
    await Promise.all(ports.map(kill));
    rmSync(dir, { recursive: true, force: true });
  };
  const live = () =>
    ports.filter(
      (port) => children.get(port)!.child.exitCode === null && children.get(port)!.child.signalCode === null,
    );

  await orStop(stop, () => createCluster(ports));

  const healthy = (timeoutMs = 15_000) => until(() => allOk(live()), timeoutMs, 'the cluster to be healthy');
  const cluster: RedisCluster = {
    nodesVariable: ports.map((p) => `127.0.0.1:${p}`).join(','),
    nodes: ports.map((port) => ({ port, kill: () => kill(port) })),
    primaryOf: (key) => primaryOf(key, live),
    healthy,
    stop,
  };
  await orStop(stop, () => healthy());
  return cluster;
}

/** A node of the cluster on `port`, without persistence, its files in `dir`; and the promise of its exit. */
function startNode(port: number, dir: string): { child: ChildProcess; exited: Promise<void> } {
  const child = spawn(
    'redis-server',
    [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--cluster-enabled',
      'yes',
      '--cluster-config-file',
      `nodes-${port}.conf`,
      '--cluster-node-timeout',
      String(NODE_TIMEOUT_MS),
      '--save',
      '',
      '--appendonly',
      'no',
      // A replica's first sync starts at once, not after Redis's default 5 s wait for more replicas.
      '--repl-diskless-sync-delay',
      '0',
      '--dir',
      dir,
    ],
    { stdio: 'ignore' },
  );
  return { child, exited: new Promise((resolve) => child.once('exit', () => resolve())) };
}

/** `step`; should it fail, the cluster stopped (its nodes killed, its directory removed) before the failure goes on. */
async function orStop(stop: () => Promise<void>, step: () => Promise<void>): Promise<void> {
  try {
    await step();
  } catch (error) {
    await stop();
    throw error;
  }
}

/** Once every node answers: three primaries and a replica of each, joined by `redis-cli --cluster create`. */
async function createCluster(ports: number[]): Promise<void> {
  for (const port of ports)
    await until(async () => (await cli(port, 'ping')).stdout.trim() === 'PONG', 5_000, `node ${port} to start`);
  await run(
    'redis-cli',
    ['--cluster', 'create', ...ports.map((p) => `127.0.0.1:${p}`), '--cluster-replicas', '1', '--cluster-yes'],
    { timeout: 30_000 },
  );
}

/**
 * Whether each of `ports` says `cluster_state:ok`, and each replica among them has its primary's data
 * (`master_link_status:up`). A replica that has not finished its first sync never stands in for its
 * primary: Redis judges its data too old to fail over to, and the slot stays without a primary.
 */
async function allOk(ports: number[]): Promise<boolean> {
  for (const port of ports) {
    if (!(await cli(port, 'cluster', 'info')).stdout.includes('cluster_state:ok')) return false;
    const replication = (await cli(port, 'info', 'replication')).stdout;
    if (replication.includes('role:slave') && !replication.includes('master_link_status:up')) return false;
  }
  return true;
}

/** The port of the primary that serves `key`'s slot now, as the first of the live nodes tells. */
async function primaryOf(key: string, live: () => number[]): Promise<number> {
  const slot = Number((await cli(live()[0]!, 'cluster', 'keyslot', key)).stdout.trim());
  // CLUSTER SHARDS is Redis 7: each shard's slot ranges and its nodes with their roles and health.
  const { stdout } = await cli(live()[0]!, '--json', 'cluster', 'shards');
  type Shard = { slots: number[]; nodes: { port: number; role: string; health: string }[] };
  for (const shard of JSON.parse(stdout) as Shard[]) {
    for (let i = 0; i < shard.slots.length; i += 2) {
      if (slot < shard.slots[i]! || slot > shard.slots[i + 1]!) continue;
      const primary = shard.nodes.find((n) => n.role === 'master' && n.health === 'online');
      if (primary) return primary.port;
    }
  }
  throw new Error(`no primary serves slot ${slot}`);
}

async function until(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      if (await check()) return;
    } catch {
      // not yet
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const cluster = await startRedisCluster(Number(process.argv[2] ?? 7000));
  console.log(`Redis Cluster up: REDIS_CLUSTER_NODES=${cluster.nodesVariable}`);
  const quit = () => void cluster.stop().then(() => process.exit(0));
  process.on('SIGINT', quit).on('SIGTERM', quit);
}
