import { randomBytes } from 'node:crypto';
import type { Cluster, Redis } from 'ioredis';
import { storeUnavailable } from '../http/errors.js';
import type { Cards } from './cards.js';
import { type Card, type CardChange, newCard, upgradedCard } from './card.js';
import { applyChange, type Outcome } from './grade.js';

/** A card Redis cannot give or keep: the service's `503`, as for any store it needs. */
function unavailable(error: unknown): never {
  throw Object.assign(storeUnavailable(), { cause: error });
}

/** How long Redis keeps a card no request has changed: a month. */
const CARD_TTL_MS = 30 * 24 * 3_600_000;
/**
 * Folds a change waits for before its answer goes on: each failed attempt means another instance's fold
 * succeeded, so a few suffice; a change left queued is folded by the next one, never lost.
 */
const FOLD_ATTEMPTS = 8;

/**
 * Writes `ARGV[2]` as the card if its version is still `ARGV[1]`, and takes the `ARGV[3]` changes it
 * folded off the head of the queue: one fold, atomic across instances. The pairs from `ARGV[5]` on are what
 * each change of another instance's did to the checks (its id, then its outcomes' JSON): kept in a hash for that
 * instance to take (a minute at most), since the grade of a request is told to the request log of its own.
 */
const FOLD = `
if (redis.call('HGET', KEYS[1], 'version') or '0') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'card', ARGV[2], 'version', tonumber(ARGV[1]) + 1)
redis.call('LTRIM', KEYS[2], tonumber(ARGV[3]), -1)
redis.call('PEXPIRE', KEYS[1], ARGV[4])
if #ARGV > 4 then
  for i = 5, #ARGV, 2 do redis.call('HSET', KEYS[3], ARGV[i], ARGV[i + 1]) end
  redis.call('PEXPIRE', KEYS[3], 60000)
end
return 1`;

type CardRedis = (Redis | Cluster) & {
  cardFold(
    card: string,
    queue: string,
    outcomes: string,
    version: string,
    folded: string,
    taken: number,
    ttl: number,
    ...othersOutcomes: string[]
  ): Promise<number>;
};

/** A change as queued: with an id of its own, so that the instance that queued it knows when it is folded. */
interface Queued {
  id: string;
  change: CardChange;
}

/**
 * The cards in Redis. Each key has a card (a hash: its JSON and a version) and a queue of changes (a
 * list): a change is appended to the queue (RPUSH: atomic, and in the order changes reach Redis), then
 * folded into the card, by whichever instance gets there first, with a compare-and-set on the version
 * that takes exactly the folded changes off the queue. A fold that loses its race was overtaken by one that
 * took every change queued before it, so no change is dropped however many race, and a reader folds what is
 * still queued (the grader runs here, in TypeScript; Redis only keeps the change atomic). A card lives as
 * long as the limits' state does (a month unchanged), and survives a restart of any instance.
 */
export class RedisCards implements Cards {
  readonly #redis: CardRedis;
  readonly #prefix: string;
  readonly #warn: (fields: object, message: string) => void;

  constructor(
    redis: Redis | Cluster,
    { prefix = 'petstore:', warn }: { prefix?: string; warn: (fields: object, message: string) => void },
  ) {
    redis.defineCommand('cardFold', { numberOfKeys: 3, lua: FOLD });
    this.#redis = redis as CardRedis;
    this.#prefix = prefix;
    this.#warn = warn;
  }

  /**
   * Queues the change, then folds until it is in the card; answers its outcomes, also when another instance folded
   * it (that fold kept them). Grading never fails a request: an error is said at warn.
   */
  async record(keyId: string, since: number, change: CardChange): Promise<Outcome[] | undefined> {
    const [card, queue, outcomes] = this.#keys(keyId);
    const id = randomBytes(8).toString('base64url');
    try {
      await this.#redis
        .multi()
        .rpush(queue, JSON.stringify({ id, change } satisfies Queued))
        .pexpire(queue, CARD_TTL_MS)
        .exec();
      for (let attempt = 0; attempt < FOLD_ATTEMPTS; attempt++) {
        const { version, folded, queued, byChange } = await this.#snapshot(card, queue, since);
        if (!queued.some((entry) => entry.id === id)) return this.#foldedElsewhere(outcomes, id);
        const taken = queued.length;
        const others = Object.entries(byChange).flatMap(([change, made]) =>
          change === id ? [] : [change, JSON.stringify(made)],
        );
        const cardJson = JSON.stringify(folded);
        if (await this.#redis.cardFold(card, queue, outcomes, version, cardJson, taken, CARD_TTL_MS, ...others))
          return byChange[id];
      }
    } catch (error) {
      this.#warn({ err: error }, 'report card: a change was not kept');
    }
    return undefined;
  }

  /** A change's outcomes as the fold of another instance kept them, taken. */
  async #foldedElsewhere(outcomes: string, id: string): Promise<Outcome[] | undefined> {
    const replies = await this.#redis.multi().hget(outcomes, id).hdel(outcomes, id).exec();
    const kept = replies?.[0]?.[1] as string | null | undefined;
    return kept ? (JSON.parse(kept) as Outcome[]) : undefined;
  }

  /** The key's card with what is still queued folded in; a `503` while Redis does not answer. */
  async read(keyId: string, since: number): Promise<Card> {
    const [card, queue] = this.#keys(keyId);
    return (await this.#snapshot(card, queue, since).catch(unavailable)).folded;
  }

  async clear(keyId: string, since: number): Promise<Card> {
    const card = newCard(since);
    const [key, queue] = this.#keys(keyId);
    const done = await this.#redis
      .multi()
      .hset(key, 'card', JSON.stringify(card))
      .hincrby(key, 'version', 1)
      .pexpire(key, CARD_TTL_MS)
      .del(queue)
      .exec()
      .catch(unavailable);
    if (done?.some(([error]) => error)) unavailable(done.find(([error]) => error)![0]);
    return card;
  }

  async close(): Promise<void> {
    this.#redis.disconnect();
  }

  /** The card and its queue as they stand at one instant, and the card with the queue folded in. */
  async #snapshot(card: string, queue: string, since: number) {
    const replies = await this.#redis.multi().hmget(card, 'card', 'version').lrange(queue, 0, -1).exec();
    const failed = replies?.find(([error]) => error);
    if (!replies || failed) throw failed?.[0] ?? new Error('report card: the snapshot was not answered');
    const [held, version] = replies[0]![1] as [string | null, string | null];
    const queued = (replies[1]![1] as string[]).map((entry) => JSON.parse(entry) as Queued);
    const folded = held ? upgradedCard(JSON.parse(held) as Card) : newCard(since);
    const byChange: Record<string, Outcome[]> = {};
    for (const entry of queued) {
      const outcomes = applyChange(folded, entry.change);
      if (outcomes) byChange[entry.id] = outcomes;
    }
    return { version: version ?? '0', folded, queued, byChange };
  }

  /** The key's card, its queue, and the outcomes of its latest fold, in one Cluster slot. */
  #keys(keyId: string): [string, string, string] {
    const card = `${this.#prefix}card:{${keyId}}`;
    return [card, `${card}:queue`, `${card}:outcomes`];
  }
}
