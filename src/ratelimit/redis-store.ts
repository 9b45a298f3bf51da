import { createHash, randomBytes } from 'node:crypto';
import { type Cluster, Redis } from 'ioredis';
import type { Clock } from '../clock.js';
import { type KeyClock, keyNow } from '../clock.js';
import { type BanRules, DEFAULT_BAN_RULES, type Sender } from './decision.js';
import type { Policy } from './plans.js';
import { LIMITER_SCRIPT } from './redis-script.js';
import { STAMP_TTL_MS } from './redis-stamp.js';
import type { LimiterStore } from './store.js';
import { TurnBatch } from '../turn-batch.js';
import { type Reply, verdictOf } from './redis-reply.js';
import type { Verdict } from './verdict.js';

export interface RedisLimiterStoreOptions {
  rules?: BanRules;
  /** Tests only: without one, the script reads Redis `TIME`, so instances' clocks do not matter. */
  clock?: Clock;
  /** Starts every key; the caller follows in braces, so all of one caller's keys share a Cluster slot. */
  prefix?: string;
  /**
   * What a run's reply goes through before its `calls` are answered (the failover store's deadline,
   * ./failover-store.ts): one judgement, and one timer, per run rather than per call. A rejection
   * fails every call of the run.
   */
  judge?: (reply: Promise<unknown>, calls: number) => Promise<unknown>;
}

type Mode = 'hit' | 'refuse' | 'peek' | 'ban' | 'unban';

const SCRIPT_SHA = createHash('sha1').update(LIMITER_SCRIPT).digest('hex');

/**
 * The keys of one caller: minute log, rejections, state, stamp. The minute log is `minute-ms` since it
 * holds one pair per millisecond (./redis-script.ts): a service upgraded across that change forgets the
 * minute's counts once (the day's stay), rather than read the older list of instants as pairs.
 */
export function limiterKeys(prefix: string, caller: string): [string, string, string, string] {
  const base = `${prefix}{${caller}}:`;
  return [`${base}minute-ms`, `${base}rejections`, `${base}state`, `${base}stamp`];
}

/** One call of the script: a caller's keys and arguments, and who waits for its reply, in the shape it wants. */
interface Call {
  /** Which calls may share a run: any on one Redis (''), one caller's on a cluster. */
  run: string;
  keys: readonly string[];
  args: readonly (string | number)[];
  /** The policy of a call that asks for a verdict (hit, refuse, peek): its reply becomes that verdict. */
  policy: Policy | undefined;
  /** Else the call's reply as its caller takes it (a ban, nothing). */
  shape: ((reply: unknown[]) => unknown) | undefined;
  resolve(answer: unknown): void;
  reject(error: unknown): void;
}

/**
 * The most calls one script run decides. A run holds Redis alone, and its reply comes whole: a few
 * dozen calls keep both short, where nearly all of a call's fixed cost is shared (docs/performance.md#redis).
 */
export const MAX_CALLS_PER_RUN = 16;

/**
 * A store shared by every instance, on one Redis or a Cluster. Each call is decided by the script,
 * atomically, so a caller's decisions are exact across instances. The store owns the client it is
 * given: `close` quits it.
 *
 * The calls of one event-loop turn leave together, once the turn's I/O is done (../turn-batch.ts): one
 * script run decides up to `MAX_CALLS_PER_RUN` of them, each in turn, so under load a request costs
 * Node and Redis a fraction of a command (its parsing, its reply's promise, the script's set-up and
 * `TIME`) and of a system call, rather than one each. On a cluster a run's keys must share a slot, so
 * there a run holds one caller's calls (a burst of one key's requests), on the node of its slot.
 */
export class RedisLimiterStore implements LimiterStore {
  readonly #redis: Redis | Cluster;
  readonly #clock: Clock | undefined;
  readonly #prefix: string;
  /** The script's first arguments, the same for every run. */
  readonly #ruleArgs: readonly number[];
  /** Whether the client is one Redis (not a cluster): then any calls may share a run. */
  readonly #single: boolean;
  /**
   * This turn's calls, sent once its I/O is done, by the run they
   * may share: all one on one Redis, by caller on a cluster.
   */
  readonly #pending = new TurnBatch<Call>((calls) => this.#sendAll(calls));
  /** This turn's restamps: each caller's stamp is changed once for all of them. */
  readonly #restamps = new TurnBatch<Restamp>((restamps) => this.#restampAll(restamps));

  /** See `RedisLimiterStoreOptions.judge`. */
  readonly #judge: RedisLimiterStoreOptions['judge'];

  constructor(
    redis: Redis | Cluster,
    { rules = DEFAULT_BAN_RULES, clock, prefix = 'petstore:', judge }: RedisLimiterStoreOptions = {},
  ) {
    this.#redis = redis;
    this.#judge = judge;
    this.#single = redis instanceof Redis;
    const { rejections, withinMs, firstBanMs, maxBanMs, escalationWindowMs } = rules;
    this.#ruleArgs = [rejections, withinMs, firstBanMs, maxBanMs, escalationWindowMs];
    this.#clock = clock;
    this.#prefix = prefix;
  }

  hit(caller: string, policy: Policy, unbanSeq = 0, clock?: KeyClock, sender?: Sender): Promise<Verdict> {
    return this.#run('hit', caller, policy, unbanSeq, clock, sender);
  }

  refuse(caller: string, policy: Policy, unbanSeq = 0, clock?: KeyClock, sender?: Sender): Promise<Verdict> {
    return this.#run('refuse', caller, policy, unbanSeq, clock, sender);
  }

  /** Redis is always asked: one round trip. */
  hitNow(): undefined {
    return undefined;
  }

  peek(caller: string, policy: Policy, unbanSeq = 0, clock?: KeyClock): Promise<Verdict> {
    return this.#run('peek', caller, policy, unbanSeq, clock);
  }

  async unban(caller: string): Promise<void> {
    await this.#run('unban', caller, undefined, 0, undefined, undefined, () => undefined);
  }

  /** Deletes the caller's minute log, rejections and state (its stamp stays: it guards what memory holds). */
  async forget(caller: string): Promise<void> {
    await this.#redis.del(...limiterKeys(this.#prefix, caller).slice(0, 3));
  }

  banOf(caller: string, unbanSeq = 0, clock?: KeyClock): Promise<{ until: number; level: number } | null> {
    return this.#run('ban', caller, undefined, unbanSeq, clock, undefined, (reply) => {
      const [until, level] = reply as [number, number];
      return until > 0 ? { until, level } : null;
    });
  }

  /**
   * Gives each caller a new stamp, which the verdicts of its admissions and peeks carry from then on
   * (`Verdict.stamp`): what memory holds of a caller under its old stamp is no longer served on any
   * instance (orders/order-pages.ts). Resolves once Redis has it. The restamps of one turn share one
   * new stamp, each caller's set once.
   */
  readonly stamps = true;

  restamp(callers: readonly string[]): Promise<void> {
    return new Promise((resolve, reject) => this.#restamps.add({ callers, resolve, reject }));
  }

  async close(): Promise<void> {
    // QUIT needs a live connection (the offline queue may be off); disconnect needs nothing.
    await this.#redis.quit().catch(() => this.#redis.disconnect());
  }

  /** One call, answered with its reply in the shape `shape` makes (by default, `policy`'s verdict). */
  #run(
    mode: 'hit' | 'refuse' | 'peek',
    caller: string,
    policy: Policy,
    unbanSeq: number,
    clock: KeyClock | undefined,
    sender?: Sender,
  ): Promise<Verdict>;
  #run<T>(
    mode: 'ban' | 'unban',
    caller: string,
    policy: undefined,
    unbanSeq: number,
    clock: KeyClock | undefined,
    sender: undefined,
    shape: (reply: unknown[]) => T,
  ): Promise<T>;
  #run(
    mode: Mode,
    caller: string,
    policy: Policy | undefined,
    unbanSeq: number,
    clock: KeyClock | undefined,
    sender?: Sender,
    shape?: (reply: unknown[]) => unknown,
  ): Promise<unknown> {
    return new Promise((resolve, reject) => {
      const args = [
        mode,
        this.#nowArg(clock),
        policy?.perMinute ?? 0,
        policy?.perDay ?? 0,
        unbanSeq,
        policy?.bans === false ? 0 : 1,
        // The real instant for the in-flight allowance: Redis's TIME, or the clock given to the store (tests).
        this.#clock ? this.#clock() : '',
        sender?.conn ?? 0,
        sender?.mark ?? 0,
        // How long the request's connection has been open, so that Redis places its opening on its own clock.
        sender ? Math.max(0, sender.real - sender.openedAt) : 0,
      ];
      const run = this.#single ? '' : caller;
      this.#pending.add({ run, keys: limiterKeys(this.#prefix, caller), args, policy, shape, resolve, reject });
    });
  }

  /**
   * The script's `now`: '' for Redis's `TIME`; a test key's time as Redis's moved by its offset
   * (`+<ms>`), or where its frozen clock stands; with a clock given to the store (tests), that clock's.
   */
  #nowArg(clock: KeyClock | undefined): string | number {
    if (this.#clock) return clock ? keyNow(clock, this.#clock()) : this.#clock();
    if (clock === undefined) return '';
    return clock.frozenAt ?? (clock.offsetMs === 0 ? '' : `+${clock.offsetMs}`);
  }

  #sendAll(calls: Call[]): void {
    const runs = new Map<string, Call[]>();
    for (const call of calls) {
      const together = runs.get(call.run);
      if (together) together.push(call);
      else runs.set(call.run, [call]);
    }
    for (const run of runs.values())
      for (let i = 0; i < run.length; i += MAX_CALLS_PER_RUN) this.#send(run.slice(i, i + MAX_CALLS_PER_RUN));
  }

  #restampAll(restamps: Restamp[]): void {
    // Random: no stamp a caller had before, here or on another instance, can come back.
    const stamp = randomBytes(12).toString('base64url');
    const callers = new Set(restamps.flatMap((r) => r.callers));
    const set = [...callers].map((caller) =>
      this.#redis.set(limiterKeys(this.#prefix, caller)[3], stamp, 'PX', STAMP_TTL_MS),
    );
    Promise.all(set).then(
      () => restamps.forEach((r) => r.resolve()),
      (error: unknown) => restamps.forEach((r) => r.reject(error)),
    );
  }

  /** One run of the script for `calls`; each gets its own reply, or the run's error. */
  #send(calls: Call[]): void {
    // Plain loops: flatMap and spreading cost more than the rest of a run's work here.
    const keys: string[] = [];
    const args: (string | number)[] = this.#ruleArgs.slice();
    for (const call of calls) {
      for (const key of call.keys) keys.push(key);
      for (const arg of call.args) args.push(arg);
    }
    const replied = (replies: unknown) => calls.forEach((call, i) => answer(call, (replies as unknown[][])[i]!));
    const failed = (error: unknown) => calls.forEach((call) => call.reject(error));
    const reply = this.#redis.evalsha(SCRIPT_SHA, keys.length, ...keys, ...args).catch((error: unknown) => {
      // A restarted or flushed server has forgotten the script: send it whole, once.
      if (!(error instanceof Error && error.message.startsWith('NOSCRIPT'))) throw error;
      return this.#redis.eval(LIMITER_SCRIPT, keys.length, ...keys, ...args);
    });
    (this.#judge ? this.#judge(reply, calls.length) : reply).then(replied, failed);
  }
}

/** Callers to restamp, and who waits for it. */
interface Restamp {
  callers: readonly string[];
  resolve(): void;
  reject(error: unknown): void;
}

/** A call's reply, in the shape its caller takes; a reply that cannot be read fails that call alone. */
function answer(call: Call, reply: unknown[]): void {
  try {
    call.resolve(call.shape ? call.shape(reply) : verdictOf(reply as Reply, call.policy!));
  } catch (error) {
    call.reject(error);
  }
}
