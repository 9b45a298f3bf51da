import type { ChangeFeed } from '../db/change-feed.js';
import type { Db } from '../db/database.js';
import { HeldRows } from '../db/held-rows.js';
import { type KeyClock, REAL_TIME } from '../clock.js';
import { isRealTime } from './clock.js';

/**
 * Where test keys' clocks are kept: in the store, which every instance shares, and read at each request
 * of a test key (keys/identify.ts), so that a move answered through one instance is the time of the
 * key's next request through any (docs/testing-clients.md#testing-your-client-in-seconds: no allowance). On the
 * embedded store, where every change is heard before the next request (db/change-feed.ts `immediate`), they are held in
 * memory too, a key without a clock as the real time: the store's one connection is then not asked at each
 * request (it may be held by a transaction). Live keys never read them.
 */
export class TestClocks {
  readonly #held: HeldRows<KeyClock>;

  constructor(
    private readonly db: Db,
    private readonly changes: Pick<ChangeFeed, 'immediate' | 'subscribe' | 'changed'>,
  ) {
    this.#held = new HeldRows('test_clocks', changes);
  }

  /** The key's clock: from memory when held, else read (through `db`: a transaction's, to move it, never held). */
  of(keyId: string, db?: Db): KeyClock | Promise<KeyClock> {
    if (db !== undefined) return this.#read(keyId, db);
    const held = this.#held.get(keyId);
    return held !== undefined ? held : this.#held.read(keyId, () => this.#read(keyId, this.db));
  }

  /** Keeps the key's clock (the real time, running, is kept as none), and tells the feed. */
  async set(db: Db, keyId: string, clock: KeyClock): Promise<void> {
    if (isRealTime(clock)) return this.clear(db, keyId);
    const row = { offset_ms: clock.offsetMs, frozen_at: clock.frozenAt };
    await db
      .insertInto('test_clocks')
      .values({ api_key_id: keyId, ...row })
      .onConflict((conflict) => conflict.column('api_key_id').doUpdateSet(row))
      .execute();
    this.changes.changed('test_clocks', keyId);
  }

  /** Back to the real time. */
  async clear(db: Db, keyId: string): Promise<void> {
    await db.deleteFrom('test_clocks').where('api_key_id', '=', keyId).execute();
    this.changes.changed('test_clocks', keyId);
  }

  async #read(keyId: string, db: Db): Promise<KeyClock> {
    const row = await db
      .selectFrom('test_clocks')
      .select(['offset_ms', 'frozen_at'])
      .where('api_key_id', '=', keyId)
      .executeTakeFirst();
    return row
      ? { offsetMs: Number(row.offset_ms), frozenAt: row.frozen_at === null ? null : Number(row.frozen_at) }
      : REAL_TIME;
  }
}
