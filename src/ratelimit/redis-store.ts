import { createHash } from 'node:crypto';
import { type Cluster, Redis } from 'ioredis';
import type { Clock } from '../clock.js';
import { type BanRules, DEFAULT_BAN_RULES } from './decision.js';
import type { Policy } from './plans.js';
import { LIMITER_SCRIPT } from './redis-script.js';
import type { LimiterStore } from './store.js';
import { type Assessment, banned, minuteWindowMs, rateLimited, type Verdict } from './verdict.js';

export interface RedisLimiterStoreOptions {
  rules?: BanRules;
  /** Tests only: without one, the script reads Redis `TIME`, so instances' clocks do not matter. */
  clock?: Clock;
  /** Starts every key; the caller follows in braces, so all of one caller's keys share a Cluster slot. */
  prefix?: string;
}

type Mode = 'hit' | 'refuse' | 'peek' | 'ban' | 'unban';

/** What the script answers to `hit` and `peek` (see ./redis-script.ts). */
type Reply = [
  kind: Verdict['kind'],
  at: number,
  minuteRemaining: number,
  minuteResetAt: number,
  minuteNextAdmitInMs: number,
  dayRemaining: number,
  dayResetAt: number,
  dayNextAdmitInMs: number,
  bannedUntil: number,
  banStartedUntil: number,
  bindingUntil: number,
  minuteOldestLeavesAt: number,
];

const SCRIPT_SHA = createHash('sha1').update(LIMITER_SCRIPT).digest('hex');

/** The keys of one caller: minute log, rejections, state. */
export function limiterKeys(prefix: string, caller: string): [string, string, string] {
  const base = `${prefix}{${caller}}:`;
  return [`${base}minute`, `${base}rejections`, `${base}state`];
}

/**
 * A store shared by every instance, on one Redis or a Cluster. Each call is one script run, so a
 * caller's decisions are atomic across instances. The store owns the client it is given: `close` quits it.
 */
export class RedisLimiterStore implements LimiterStore {
  readonly #redis: Redis | Cluster;
  readonly #rules: BanRules;
  readonly #clock: Clock | undefined;
  readonly #prefix: string;
  /** One Redis, whose connection `#coalesce` corks; a cluster's node connections are ioredis's own. */
  readonly #single: Redis | undefined;
  /** Whether this turn's scripts are being held for one write. */
  #corked = false;

  constructor(redis: Redis | Cluster, { rules = DEFAULT_BAN_RULES, clock, prefix = 'petstore:' }: RedisLimiterStoreOptions = {}) {
    this.#redis = redis;
    this.#single = redis instanceof Redis ? redis : undefined;
    this.#rules = rules;
    this.#clock = clock;
    this.#prefix = prefix;
  }

  async hit(caller: string, policy: Policy, unbanSeq = 0): Promise<Verdict> {
    return verdictOf((await this.#run('hit', caller, policy, unbanSeq)) as Reply, policy);
  }

  async refuse(caller: string, policy: Policy, unbanSeq = 0): Promise<Verdict> {
    return verdictOf((await this.#run('refuse', caller, policy, unbanSeq)) as Reply, policy);
  }

  /** Redis is always asked: one round trip. */
  hitNow(): undefined {
    return undefined;
  }

  async peek(caller: string, policy: Policy, unbanSeq = 0): Promise<Verdict> {
    return verdictOf((await this.#run('peek', caller, policy, unbanSeq)) as Reply, policy);
  }

  async unban(caller: string): Promise<void> {
    await this.#run('unban', caller);
  }

  async banOf(caller: string, unbanSeq = 0): Promise<{ until: number; level: number } | null> {
    const [until, level] = (await this.#run('ban', caller, undefined, unbanSeq)) as [number, number];
    return until > 0 ? { until, level } : null;
  }

  async close(): Promise<void> {
    // QUIT needs a live connection (the offline queue may be off); disconnect needs nothing.
    await this.#redis.quit().catch(() => this.#redis.disconnect());
  }

  async #run(mode: Mode, caller: string, policy?: Policy, unbanSeq = 0): Promise<unknown[]> {
    const { rejections, withinMs, firstBanMs, maxBanMs, escalationWindowMs } = this.#rules;
    const keys = limiterKeys(this.#prefix, caller);
    const args = [mode, this.#clock?.() ?? '', policy?.perMinute ?? 0, policy?.perDay ?? 0, unbanSeq];
    const ruleArgs = [rejections, withinMs, firstBanMs, maxBanMs, escalationWindowMs];
    this.#coalesce();
    try {
      return (await this.#redis.evalsha(SCRIPT_SHA, keys.length, ...keys, ...args, ...ruleArgs)) as unknown[];
    } catch (error) {
      // A restarted or flushed server has forgotten the script: send it whole, once.
      if (!(error instanceof Error && error.message.startsWith('NOSCRIPT'))) throw error;
      return (await this.#redis.eval(LIMITER_SCRIPT, keys.length, ...keys, ...args, ...ruleArgs)) as unknown[];
    }
  }

  /**
   * The scripts of one event-loop turn leave in one write: the connection is corked at the turn's
   * first and uncorked once the turn's I/O is done (`setImmediate`), so under load a request costs
   * Node and Redis a fraction of a system call rather than one each. Unlike ioredis's autopipelining,
   * each script is still its own command: its reply is read as it comes, and the next turn's scripts
   * do not wait for this turn's replies. A cluster's nodes are left as they are.
   */
  #coalesce(): void {
    const redis = this.#single;
    if (this.#corked || redis?.status !== 'ready') return;
    const stream = redis.stream;
    stream.cork();
    this.#corked = true;
    setImmediate(() => {
      this.#corked = false;
      stream.uncork();
    });
  }
}

/** The verdict shapes of ./decision.ts, built by the same functions of ./verdict.ts from the numbers the script decided. */
function verdictOf(reply: Reply, policy: Policy): Verdict {
  const [kind, at, minuteRemaining, minuteResetAt, minuteNext, dayRemaining, dayResetAt, dayNext, bannedUntil, banStartedUntil, bindingUntil, oldestLeavesAt] =
    reply;
  const assessment: Assessment = {
    plan: policy.name,
    at,
    minute: {
      limit: policy.perMinute,
      remaining: minuteRemaining,
      resetAt: minuteResetAt,
      nextAdmitInMs: minuteNext,
      windowMs: minuteWindowMs(oldestLeavesAt > 0 ? oldestLeavesAt : undefined, at),
    },
    day: { limit: policy.perDay, remaining: dayRemaining, resetAt: dayResetAt, nextAdmitInMs: dayNext, windowMs: dayResetAt - at },
  };
  switch (kind) {
    case 'admitted':
      return { kind, ...assessment };
    case 'banned':
      return banned(assessment, bannedUntil, bindingUntil);
    case 'peek':
      return bannedUntil > 0 ? { kind, ...assessment, bannedUntil } : { kind, ...assessment };
    case 'rate-limited':
      return rateLimited(assessment, banStartedUntil);
  }
}
