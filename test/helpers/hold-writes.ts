import { sql } from 'kysely';
import { type Db, isEmbedded } from '../../src/db/database.js';
import { transactionsOf } from '../../src/db/group-commit.js';

export interface HeldWrites {
  /** Lets the writes that waited go on; resolves once the holding transaction is over. */
  release(): Promise<void>;
}

/**
 * Holds the store's writes as another writer would, so that a write the service starts now stays in
 * progress until `release`, whatever the machine's speed. On SQLite a group of the service's own group
 * commit stays open (one group commits at a time); on PostgreSQL a transaction holds the idempotency
 * records in `EXCLUSIVE` mode, which lets reads through and makes every insert wait.
 */
export async function holdWrites(db: Db): Promise<HeldWrites> {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let held!: () => void;
  const holding = new Promise<void>((resolve) => (held = resolve));
  const done = isEmbedded(db)
    ? transactionsOf(db).run(async () => {
        held();
        await released;
      })
    : db.transaction().execute(async (trx) => {
        await sql`lock table idempotency_records in exclusive mode`.execute(trx);
        held();
        await released;
      });
  await holding;
  return {
    release: async () => {
      release();
      await done;
    },
  };
}
