import type { Cluster, Redis } from 'ioredis';
import { storeUnavailable } from '../http/errors.js';
import type { Cards } from './cards.js';
import { type Card, newCard } from './card.js';

/** A card Redis cannot give or keep: the service's `503`, as for any store it needs. */
function unavailable(error: unknown): never {
  throw Object.assign(storeUnavailable(), { cause: error });
}

/** How long Redis keeps a card no request has changed: a month. */
const CARD_TTL_MS = 30 * 24 * 3_600_000;
/** Attempts at one change racing others of the same card (compare and set). */
const ATTEMPTS = 20;

/**
 * Writes `ARGV[2]` as the card if the card is still `ARGV[1]` ('' for none), moving the count of
 * requests under way by `ARGV[3]`: the change of one request, atomic across instances.
 */
const COMPARE_AND_SET = `
local held = redis.call('HGET', KEYS[1], 'card') or ''
if held ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'card', ARGV[2])
local under = redis.call('HINCRBY', KEYS[1], 'under', ARGV[3])
if under < 0 then redis.call('HSET', KEYS[1], 'under', 0) end
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return 1`;

type CardRedis = (Redis | Cluster) & {
  cardSet(key: string, held: string, card: string, moved: number, ttl: number): Promise<number>;
};

/**
 * The cards in Redis, one hash a key (`card`: its JSON, `under`: its requests under way), changed by
 * compare and set: the grader runs here, in TypeScript, and Redis only keeps the change atomic. A card
 * lives as long as the limits' state does (a month unchanged), and survives a restart of any instance.
 * Grading never fails a request: a change Redis did not take is lost, and said at warn.
 */
export class RedisCards implements Cards {
  readonly #redis: CardRedis;
  readonly #prefix: string;
  readonly #warn: (fields: object, message: string) => void;

  constructor(
    redis: Redis | Cluster,
    { prefix = 'petstore:', warn }: { prefix?: string; warn: (fields: object, message: string) => void },
  ) {
    redis.defineCommand('cardSet', { numberOfKeys: 1, lua: COMPARE_AND_SET });
    this.#redis = redis as CardRedis;
    this.#prefix = prefix;
    this.#warn = warn;
  }

  arrived(keyId: string): void {
    // Sent now, on the connection the change will follow on: Redis applies them in this order.
    this.#redis
      .hincrby(this.#key(keyId), 'under', 1)
      .catch((error: unknown) => this.#warn({ err: error }, 'report card: a request under way was not counted'));
  }

  async update(
    keyId: string,
    since: number,
    change: (card: Card, underWay: number) => void,
    done = false,
  ): Promise<void> {
    const key = this.#key(keyId);
    try {
      for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
        const [held, under] = await this.#redis.hmget(key, 'card', 'under');
        const card = held ? (JSON.parse(held) as Card) : newCard(since);
        change(card, Number(under ?? 0));
        if (await this.#redis.cardSet(key, held ?? '', JSON.stringify(card), done ? -1 : 0, CARD_TTL_MS)) return;
      }
      this.#warn({ keyId }, 'report card: a change lost its race too often and was dropped');
    } catch (error) {
      this.#warn({ err: error }, 'report card: a change was not kept');
    }
  }

  /** The key's card; a `503` while Redis does not answer. */
  async read(keyId: string): Promise<Card | undefined> {
    const held = await this.#redis.hget(this.#key(keyId), 'card').catch(unavailable);
    return held ? (JSON.parse(held) as Card) : undefined;
  }

  async clear(keyId: string, since: number): Promise<Card> {
    const card = newCard(since);
    const key = this.#key(keyId);
    const done = await this.#redis
      .multi()
      .hset(key, 'card', JSON.stringify(card))
      .pexpire(key, CARD_TTL_MS)
      .exec()
      .catch(unavailable);
    if (done?.some(([error]) => error)) unavailable(done.find(([error]) => error)![0]);
    return card;
  }

  async close(): Promise<void> {
    this.#redis.disconnect();
  }

  #key(keyId: string): string {
    return `${this.#prefix}card:{${keyId}}`;
  }
}
