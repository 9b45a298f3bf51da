import type { Db } from '../db/database.js';

/**
 * The deliveries of test keys whose clock a test moved (test-mode/): they fall due in each key's own
 * time, so the dispatcher claims each such key alone (./deliveries.ts `claim`).
 */

/** A test key whose clock a test moved, and its now: its deliveries fall due in its time. */
export interface ClockedKey {
  keyId: string;
  now: number;
}

/**
 * One moved clock's key's due deliveries, earliest first, a few more than its share: read along the
 * due index, where ranking every endpoint's pending deliveries would read all of them (a key a year
 * ahead has every one due).
 */
export async function clockedCandidates(
  db: Db,
  keyId: string,
  {
    due,
    at,
    limit,
    shares,
  }: { due: string; at: string; limit: number; shares: { perKey: number; perEndpoint: number } },
) {
  const rows = await db
    .selectFrom('webhook_deliveries as d')
    .innerJoin('webhook_endpoints as e', 'e.id', 'd.endpoint_id')
    .select(['d.seq', 'd.endpoint_id', 'e.api_key_id as key_id'])
    .where('d.state', '=', 'pending')
    .where('d.next_attempt_at', '<=', due)
    .where((eb) => eb.or([eb('d.claimed_until', 'is', null), eb('d.claimed_until', '<=', at)]))
    .where('e.enabled', '=', 1)
    .where('e.api_key_id', '=', keyId)
    .orderBy('d.next_attempt_at')
    .orderBy('d.seq')
    .limit(Math.min(limit, shares.perKey) * shares.perEndpoint)
    .execute();
  return rows.map((row) => ({ seq: Number(row.seq), endpoint_id: row.endpoint_id, key_id: row.key_id }));
}

/** The test keys whose clock a test moved with deliveries waiting, each with its now at the real `now`. */
export async function clockedKeys(db: Db, now: number): Promise<ClockedKey[]> {
  const rows = await db
    .selectFrom('test_clocks as c')
    .select(['c.api_key_id', 'c.offset_ms', 'c.frozen_at'])
    .where((eb) =>
      eb.exists(
        eb
          .selectFrom('webhook_deliveries as d')
          .innerJoin('webhook_endpoints as e', 'e.id', 'd.endpoint_id')
          .select('d.seq')
          .whereRef('e.api_key_id', '=', 'c.api_key_id')
          .where('d.state', '=', 'pending'),
      ),
    )
    .execute();
  return rows.map((row) => ({
    keyId: row.api_key_id,
    now: row.frozen_at === null ? now + Number(row.offset_ms) : Number(row.frozen_at),
  }));
}
