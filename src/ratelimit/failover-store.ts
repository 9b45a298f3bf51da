import { once } from 'node:events';
import { Cluster, Redis } from 'ioredis';
import type { Clock } from '../clock.js';
import type { KeyClock } from '../clock.js';
import { MemoryLimiterStore } from './memory-store.js';
import type { Sender } from './decision.js';
import type { Policy } from './plans.js';
import { RedisLimiterStore, type RedisLimiterStoreOptions } from './redis-store.js';
import type { LimiterStore } from './store.js';
import type { Verdict } from './verdict.js';
import { type Answered, COMMAND_TIMEOUT_MS, TIMED_OUT, withinDeadline } from './deadline.js';

export { COMMAND_TIMEOUT_MS } from './deadline.js';

export type LimiterMode = 'redis' | 'memory';

/** Consecutive replies that were really late before the whole store decides in memory. */
const TIMEOUTS_TO_SWITCH = 3;

/** While a cluster decides in memory, how often it is asked whether every slot has a primary that answers again. */
const CLUSTER_PROBE_MS = 250;
/** Redis Cluster's slots: every key hashes to one of them. */
const CLUSTER_SLOTS = 16_384;

/** The two levels used, in pino's argument order. */
export interface FailoverLog {
  warn(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
}

export interface FailoverLimiterStoreOptions extends Omit<RedisLimiterStoreOptions, 'clock'> {
  /** The memory fallback's clock. Redis decides on its own `TIME`, the one clock every instance shares. */
  clock: Clock;
  log: FailoverLog;
  /** Called on every switch (not for the starting mode), e.g. to feed /readyz and a metric. */
  onModeChange?: (mode: LimiterMode) => void;
}

/** How either client reconnects: soon, then every second, never giving up. */
const reconnectAfter = (attempt: number) => Math.min(attempt * 250, 1000);

/**
 * What every connection to a Redis server is told: a command is never
 * retried, nor resent after a reconnect (its script may already have run).
 */
const NEVER_TWICE = { maxRetriesPerRequest: 0, autoResendUnfulfilledCommands: false } as const;

/** Where the limiter's state is: one Redis (REDIS_URL), or a Redis Cluster's seed nodes (REDIS_CLUSTER_NODES). */
export type RedisConfig =
  { kind: 'single'; url: string } | { kind: 'cluster'; nodes: { host: string; port: number }[] };

/**
 * The limiter's Redis client, for one Redis or a Redis Cluster: a request must never wait for Redis,
 * and a command must never run twice. So a command fails at once instead of queueing while
 * disconnected, is not retried, and is not resent after a reconnect; reconnecting never stops. How
 * long a reply may take is the failover store's to judge (`COMMAND_TIMEOUT_MS`), not the client's.
 *
 * On a cluster the same holds: no queue while the cluster is not ready, no retry of a command whose
 * connection closed or that met `CLUSTERDOWN` (ioredis would send it again elsewhere, and it may
 * have run). Only a redirection is followed (`MOVED`, `ASK`, `TRYAGAIN`: the server says it did not
 * run the script). A node's connection opens when it is first needed, and ioredis holds that node's
 * first commands until it is open; the failover store's deadline bounds that wait like any other.
 */
export function createLimiterRedis(config: RedisConfig): Redis | Cluster {
  if (config.kind === 'single')
    return new Redis(config.url, { enableOfflineQueue: false, retryStrategy: reconnectAfter, ...NEVER_TWICE });
  return new Cluster(config.nodes, {
    enableOfflineQueue: false,
    retryDelayOnFailover: 0,
    retryDelayOnClusterDown: 0,
    clusterRetryStrategy: reconnectAfter,
    redisOptions: NEVER_TWICE,
  });
}

/**
 * Decides in Redis while it answers, and in this process's memory while it does not: a Redis outage
 * loosens the limits (each instance counts on its own) but never fails or delays a request.
 * Memory mode lasts until the client is `ready` again; what memory counted stays in memory.
 *
 * A busy event loop is not a Redis outage. The store switches on evidence about Redis: the connection
 * closing, an error, or `TIMEOUTS_TO_SWITCH` replies in a row that were really late. A reply is late
 * when `COMMAND_TIMEOUT_MS` have passed and one more turn of I/O has not brought it (Node runs timers
 * before it reads sockets, so after a busy stretch the timer fires before the reply that came is read),
 * and the timer was not itself late: a timer that fires late measures the loop's delay, not Redis's.
 * Nor is a reply late while one Redis answers other commands meanwhile: on its one connection replies
 * come in order, so it is working through a queue (a burst from several instances) that ours is in.
 * A Redis that stops answering gets no such excuse, and a cluster none at all: another node's replies
 * say nothing of the node that holds ours.
 */
export class FailoverLimiterStore implements LimiterStore {
  readonly #redis: Redis | Cluster;
  readonly #primary: RedisLimiterStore;
  readonly #fallback: MemoryLimiterStore;
  readonly #log: FailoverLog;
  readonly #onModeChange: (mode: LimiterMode) => void;
  #mode: LimiterMode;
  #closing = false;
  #timeouts = 0;
  #probe: NodeJS.Timeout | undefined;
  /** When one Redis last answered; a cluster's answers say nothing of one command's node. */
  readonly #answered: Answered | undefined;

  /** Takes ownership of `redis`, best made by `createLimiterRedis`. */
  constructor(
    redis: Redis | Cluster,
    { clock, log, onModeChange = () => {}, ...options }: FailoverLimiterStoreOptions,
  ) {
    this.#redis = redis;
    this.#primary = new RedisLimiterStore(redis, { ...options, judge: (reply, calls) => this.#judge(reply, calls) });
    this.#fallback = new MemoryLimiterStore({ clock, rules: options.rules });
    this.#log = log;
    this.#onModeChange = onModeChange;
    this.#mode = redis.status === 'ready' ? 'redis' : 'memory';
    this.#answered = redis instanceof Cluster ? undefined : { at: -Infinity };
    // One Redis is back when it is ready. A cluster is ready as soon as one node answers, even with a
    // primary lost and not yet replaced: it is back once every slot has a primary that answers.
    redis.on('ready', () => (redis instanceof Cluster ? this.#probeCluster(0) : this.#switch('redis')));
    // Switching on a lost connection keeps /readyz honest between requests and spares each request a failed try.
    redis.on('close', () => this.#switch('memory'));
    // ioredis reports each failed reconnect as an error; the switch is what gets logged, once.
    redis.on('error', () => {});
  }

  get mode(): LimiterMode {
    return this.#mode;
  }

  hit(caller: string, policy: Policy, unbanSeq?: number, clock?: KeyClock, sender?: Sender): Promise<Verdict> {
    return this.#call((store) => store.hit(caller, policy, unbanSeq, clock, sender));
  }

  /** Decided at once only while deciding in memory (an outage); Redis is always waited for. */
  hitNow(caller: string, policy: Policy, unbanSeq?: number, clock?: KeyClock, sender?: Sender): Verdict | undefined {
    return this.#mode === 'memory' ? this.#fallback.hitNow(caller, policy, unbanSeq, clock, sender) : undefined;
  }

  refuse(caller: string, policy: Policy, unbanSeq?: number, clock?: KeyClock, sender?: Sender): Promise<Verdict> {
    return this.#call((store) => store.refuse(caller, policy, unbanSeq, clock, sender));
  }

  peek(caller: string, policy: Policy, unbanSeq?: number, clock?: KeyClock): Promise<Verdict> {
    return this.#call((store) => store.peek(caller, policy, unbanSeq, clock));
  }

  /** In both: what memory decided during an outage goes too. */
  async forget(caller: string): Promise<void> {
    await this.#fallback.forget(caller);
    await this.#call((store) => store.forget(caller));
  }

  async unban(caller: string): Promise<void> {
    // Also lifts a ban that memory decided during an outage, should Redis fail again.
    await this.#fallback.unban(caller);
    if (this.#mode === 'redis') await this.#call((store) => store.unban(caller));
  }

  banOf(caller: string, unbanSeq?: number, clock?: KeyClock): Promise<{ until: number; level: number } | null> {
    return this.#call((store) => store.banOf(caller, unbanSeq, clock));
  }

  readonly stamps = true;

  /**
   * Restamps in Redis within a call's deadline: a change is answered
   * even while Redis does not take its stamp (orders/order-pages.ts).
   */
  async restamp(callers: readonly string[]): Promise<void> {
    const done = await withinDeadline(this.#primary.restamp(callers), this.#answered).catch(() => TIMED_OUT);
    if (done === TIMED_OUT && this.#mode === 'redis')
      this.#log.warn(
        { callers: callers.length },
        'Redis did not take the stamp of a change: other instances may serve what they hold of the callers for up to a second',
      );
  }

  async close(): Promise<void> {
    this.#closing = true;
    clearTimeout(this.#probe);
    await Promise.all([this.#primary.close(), this.#fallback.close()]);
  }

  /** In Redis while it answers; a call whose run failed or was really late (`#judge`) is decided in memory. */
  #call<T>(use: (store: LimiterStore) => Promise<T>): Promise<T> {
    if (this.#mode !== 'redis') return use(this.#fallback);
    return use(this.#primary).catch(() => use(this.#fallback));
  }

  /**
   * A run's reply, as the primary's `calls` calls share it: within the deadline, or rejected. A failed
   * run is evidence of an outage; a reply that was really late counts once for each of its calls.
   */
  #judge(reply: Promise<unknown>, calls: number): Promise<unknown> {
    return withinDeadline(reply, this.#answered).then(
      (value) => {
        if (value !== TIMED_OUT) {
          this.#timeouts = 0;
          return value;
        }
        this.#timeouts += calls;
        if (this.#timeouts >= TIMEOUTS_TO_SWITCH)
          this.#fail(new Error(`${TIMEOUTS_TO_SWITCH} replies in a row took over ${COMMAND_TIMEOUT_MS} ms`));
        throw new Error(`a reply took over ${COMMAND_TIMEOUT_MS} ms`);
      },
      (error: unknown) => {
        this.#fail(error);
        throw error;
      },
    );
  }

  #fail(error: unknown): void {
    this.#timeouts = 0;
    this.#switch('memory', error);
    if (this.#redis instanceof Cluster) this.#probeCluster();
    // A hung server leaves the connection up, and no 'ready' would ever come back: reconnect to get one.
    else if (this.#redis.status === 'ready') this.#redis.disconnect(true);
  }

  /**
   * Until the cluster serves every slot from a primary that answers,
   * asks again every `CLUSTER_PROBE_MS`; then decides there again.
   */
  #probeCluster(delayMs = CLUSTER_PROBE_MS): void {
    if (this.#probe || this.#closing) return;
    const cluster = this.#redis as Cluster;
    const again = () => {
      this.#probe = undefined;
      if (this.#closing || this.#mode === 'redis' || cluster.status !== 'ready') return;
      void everySlotAnswers(cluster).then((answers) => {
        if (answers) this.#switch('redis');
        else this.#probeCluster();
      });
    };
    this.#probe = setTimeout(again, delayMs).unref();
  }

  #switch(mode: LimiterMode, err?: unknown): void {
    if (mode === this.#mode || this.#closing) return;
    this.#mode = mode;
    if (mode === 'memory')
      this.#log.warn({ err, limiter: mode }, 'Redis is unavailable: rate limits are decided in memory');
    else this.#log.info({ limiter: mode }, 'Redis is available: rate limits are decided in Redis');
    this.#onModeChange(mode);
  }
}

/**
 * Resolves once the client can take commands at once: one Redis is ready; a cluster is ready and has
 * a connection open to each primary. (ioredis opens a node's connection at its first command, and
 * without a queue it refuses the commands that come while that connection opens: a burst at a fresh
 * instance would meet those refusals and switch it to memory.)
 */
export async function connected(redis: Redis | Cluster): Promise<void> {
  if (redis.status !== 'ready') await once(redis, 'ready');
  if (redis instanceof Cluster) await Promise.all(redis.nodes('master').map((node) => node.ping()));
}

/**
 * Whether every slot has a primary, by the cluster's own account (its slot map fetched afresh), and
 * every primary answers a `PING` in time. While a lost primary is not yet replaced, the map still names
 * it, and it does not answer.
 */
async function everySlotAnswers(cluster: Cluster): Promise<boolean> {
  const refreshed = await new Promise<boolean>((resolve) => cluster.refreshSlotsCache((error) => resolve(!error)));
  if (!refreshed) return false;
  for (let slot = 0; slot < CLUSTER_SLOTS; slot++) if (!cluster.slots[slot]?.length) return false;
  const primaries = cluster.nodes('master');
  const answers = await Promise.all(primaries.map((node) => withinDeadline(node.ping()).catch(() => TIMED_OUT)));
  return primaries.length > 0 && answers.every((answer) => answer === 'PONG');
}
