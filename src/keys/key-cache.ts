import type { Clock } from '../clock.js';
import type { ChangeFeed } from '../db/change-feed.js';
import { RowCache } from '../db/row-cache.js';
import { hashKey } from './key-format.js';
import { KnownKeys } from './known-keys.js';
import type { KeyRecord, KeysRepository } from './repository.js';

/**
 * Keys seen before are answered from memory, by the SHA-256 of the key (the key itself is not kept).
 * A revocation, plan change or unban applies at the key's next request on the instance that made it,
 * on a server sharing the CLI's SQLite file, and on every other instance within a second (see
 * db/change-feed.ts). Unknown keys are not remembered: a new key works at once, and guesses fill nothing;
 * a key nobody created is refused from memory (./known-keys.ts).
 */
export class KeyCache {
  readonly #rows: RowCache<string, KeyRecord>;
  /** The same records by id: an access token names its key by id (oauth/). */
  readonly #byId: RowCache<string, KeyRecord>;
  readonly #feed: ChangeFeed;
  readonly #known: KnownKeys;

  constructor(keys: KeysRepository, { feed, clock, max }: { feed: ChangeFeed; clock: Clock; max: number }) {
    this.#feed = feed;
    this.#known = new KnownKeys(keys, feed, clock);
    // The same rows by either key, each forgotten as soon as the feed names its id.
    const rows = (load: (key: string) => Promise<KeyRecord | undefined>) =>
      new RowCache({ table: 'api_keys', max, feed, clock, load, idOf: (record: KeyRecord) => record.id });
    this.#rows = rows((hash) => keys.findByHash(hash));
    this.#byId = rows((id) => keys.get(id));
  }

  get size(): number {
    return this.#rows.size;
  }

  /** The key's record. Every API request starts here, so this is where the feed is asked for news. */
  find(key: string): KeyRecord | undefined | Promise<KeyRecord | undefined> {
    this.#feed.check();
    const hash = hashKey(key);
    // A key nobody created costs no store query (./known-keys.ts).
    return this.#rows.cached(hash) ?? (this.#known.mayExist(hash) ? this.#rows.get(hash) : undefined);
  }

  /** The record of the key with this id (an access token's `sub`), under the same promises as `find`. */
  findById(id: string): KeyRecord | undefined | Promise<KeyRecord | undefined> {
    this.#feed.check();
    return this.#byId.get(id);
  }

  /** Bytes of what tells this instance which keys exist. */
  get knownBytes(): number {
    return this.#known.bytes;
  }
}
