import type { Cluster, Redis } from 'ioredis';

/**
 * The open streams of each key, counted where every instance sees them, so that a key holds at most its allowance
 * (STREAMS_PER_KEY) across all of them: in memory on the embedded store (one process answers), in Redis where
 * instances share the limits. A seat is taken before a stream opens and given back when it ends.
 */
export interface StreamSeats {
  /** Takes a seat for `stream` if the key holds fewer than `max`: whether it did. */
  take(keyId: string, stream: string, max: number): Promise<boolean>;
  /** Keeps the seats of streams still open (an instance that dies stops renewing, and its seats lapse). */
  renew(seats: readonly { keyId: string; stream: string }[]): Promise<void>;
  give(keyId: string, stream: string): Promise<void>;
  close(): Promise<void>;
}

/** How long a seat outlives its last renewal in Redis: three heartbeats (./hub.ts renews at each). */
export const SEAT_LEASE_MS = 45_000;

export class MemorySeats implements StreamSeats {
  readonly #held = new Map<string, Set<string>>();

  async take(keyId: string, stream: string, max: number): Promise<boolean> {
    let held = this.#held.get(keyId);
    if (!held) this.#held.set(keyId, (held = new Set()));
    if (held.size >= max) return false;
    held.add(stream);
    return true;
  }

  async renew(): Promise<void> {}

  async give(keyId: string, stream: string): Promise<void> {
    const held = this.#held.get(keyId);
    if (!held) return;
    held.delete(stream);
    if (held.size === 0) this.#held.delete(keyId);
  }

  async close(): Promise<void> {}
}

/**
 * A sorted set per key: each member a stream, its score when its lease ends. Taking a seat drops the lapsed ones and
 * counts the rest in one script, atomic across instances.
 */
const TAKE = `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[4])
redis.call('PEXPIRE', KEYS[1], ARGV[5])
return 1`;

type SeatRedis = (Redis | Cluster) & {
  takeSeat(key: string, now: number, until: number, max: number, stream: string, ttl: number): Promise<number>;
};

export class RedisSeats implements StreamSeats {
  readonly #redis: SeatRedis;

  constructor(
    redis: Redis | Cluster,
    private readonly prefix: string,
    private readonly clock: () => number,
  ) {
    redis.defineCommand('takeSeat', { numberOfKeys: 1, lua: TAKE });
    this.#redis = redis as SeatRedis;
  }

  #key = (keyId: string) => `${this.prefix}streams:{${keyId}}`;

  async take(keyId: string, stream: string, max: number): Promise<boolean> {
    const now = this.clock();
    return (await this.#redis.takeSeat(this.#key(keyId), now, now + SEAT_LEASE_MS, max, stream, SEAT_LEASE_MS)) === 1;
  }

  async renew(seats: readonly { keyId: string; stream: string }[]): Promise<void> {
    if (seats.length === 0) return;
    const until = this.clock() + SEAT_LEASE_MS;
    // XX: a seat given back, or lapsed and taken by another, is not taken again. One command each: in a cluster
    // the keys' sets are on different nodes.
    await Promise.all(
      seats.flatMap(({ keyId, stream }) => [
        this.#redis.zadd(this.#key(keyId), 'XX', until, stream),
        this.#redis.pexpire(this.#key(keyId), SEAT_LEASE_MS),
      ]),
    );
  }

  async give(keyId: string, stream: string): Promise<void> {
    await this.#redis.zrem(this.#key(keyId), stream);
  }

  async close(): Promise<void> {
    this.#redis.disconnect();
  }
}
