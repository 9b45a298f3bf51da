import { Redis } from 'ioredis';
import { MemoryLimiterStore } from './memory-store.js';
import type { Policy } from './plans.js';
import { RedisLimiterStore, type RedisLimiterStoreOptions } from './redis-store.js';
import type { LimiterStore } from './store.js';
import type { Verdict } from './verdict.js';

export type LimiterMode = 'redis' | 'memory';

/** The two levels used, in pino's argument order. */
export interface FailoverLog {
  warn(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
}

export interface FailoverLimiterStoreOptions extends RedisLimiterStoreOptions {
  log: FailoverLog;
  /** Called on every switch (not for the starting mode), e.g. to feed /readyz and a metric. */
  onModeChange?: (mode: LimiterMode) => void;
}

/**
 * The limiter's Redis client: a request must never wait for Redis, and a command must never run
 * twice. So a command fails after 100 ms instead of queueing while disconnected, is not retried,
 * and is not resent after a reconnect (its script may already have run); reconnecting never stops.
 */
export function createLimiterRedis(url: string): Redis {
  return new Redis(url, {
    commandTimeout: 100,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    autoResendUnfulfilledCommands: false,
    retryStrategy: (attempt) => Math.min(attempt * 250, 1000),
  });
}

/**
 * Decides in Redis while it answers, and in this process's memory while it does not: a Redis outage
 * loosens the limits (each instance counts on its own) but never fails or delays a request.
 * Memory mode lasts until the client is `ready` again; what memory counted stays in memory.
 */
export class FailoverLimiterStore implements LimiterStore {
  readonly #redis: Redis;
  readonly #primary: RedisLimiterStore;
  readonly #fallback: MemoryLimiterStore;
  readonly #log: FailoverLog;
  readonly #onModeChange: (mode: LimiterMode) => void;
  #mode: LimiterMode;
  #closing = false;

  /** Takes ownership of `redis`, best made by `createLimiterRedis`. */
  constructor(redis: Redis, { log, onModeChange = () => {}, ...options }: FailoverLimiterStoreOptions) {
    this.#redis = redis;
    this.#primary = new RedisLimiterStore(redis, options);
    this.#fallback = new MemoryLimiterStore({ clock: options.clock, rules: options.rules });
    this.#log = log;
    this.#onModeChange = onModeChange;
    this.#mode = redis.status === 'ready' ? 'redis' : 'memory';
    redis.on('ready', () => this.#switch('redis'));
    // Switching on a lost connection keeps /readyz honest between requests and spares each request a failed try.
    redis.on('close', () => this.#switch('memory'));
    // ioredis reports each failed reconnect as an error; the switch is what gets logged, once.
    redis.on('error', () => {});
  }

  get mode(): LimiterMode {
    return this.#mode;
  }

  hit(caller: string, policy: Policy, unbanSeq?: number): Promise<Verdict> {
    return this.#call((store) => store.hit(caller, policy, unbanSeq));
  }

  peek(caller: string, policy: Policy, unbanSeq?: number): Promise<Verdict> {
    return this.#call((store) => store.peek(caller, policy, unbanSeq));
  }

  async unban(caller: string): Promise<void> {
    // Also lifts a ban that memory decided during an outage, should Redis fail again.
    await this.#fallback.unban(caller);
    if (this.#mode === 'redis') await this.#call((store) => store.unban(caller));
  }

  banOf(caller: string, unbanSeq?: number): Promise<{ until: number; level: number } | null> {
    return this.#call((store) => store.banOf(caller, unbanSeq));
  }

  async close(): Promise<void> {
    this.#closing = true;
    await Promise.all([this.#primary.close(), this.#fallback.close()]);
  }

  async #call<T>(use: (store: LimiterStore) => Promise<T>): Promise<T> {
    if (this.#mode === 'redis') {
      try {
        return await use(this.#primary);
      } catch (error) {
        this.#switch('memory', error);
        // A timeout leaves the connection up, and no 'ready' would ever come back: reconnect to get one.
        if (this.#redis.status === 'ready') this.#redis.disconnect(true);
      }
    }
    return use(this.#fallback);
  }

  #switch(mode: LimiterMode, err?: unknown): void {
    if (mode === this.#mode || this.#closing) return;
    this.#mode = mode;
    if (mode === 'memory') this.#log.warn({ err, limiter: mode }, 'Redis is unavailable: rate limits are decided in memory');
    else this.#log.info({ limiter: mode }, 'Redis is available: rate limits are decided in Redis');
    this.#onModeChange(mode);
  }
}
