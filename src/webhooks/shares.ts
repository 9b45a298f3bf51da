import { sql } from 'kysely';
import type { Db } from '../db/database.js';

/**
 * How a claim of deliveries (./deliveries.ts) keeps to the shares (WEBHOOK_KEY_CONCURRENCY,
 * WEBHOOK_ENDPOINT_CONCURRENCY): one key's thousands waiting, or its dead endpoints, take only its own share of
 * the attempts an instance makes at once.
 */

/** How many attempts may run at once: for one key, and for one of its endpoints. */
export interface Shares {
  perKey: number;
  perEndpoint: number;
}

/** The attempts this instance has under way, by key and by endpoint. */
export interface InFlight {
  keys: ReadonlyMap<string, number>;
  endpoints: ReadonlyMap<string, number>;
}

/**
 * The first `limit` candidates, in their order, that fit in their key's and endpoint's shares beside what is in flight.
 */
export function withinShares<C extends { endpoint_id: string; key_id: string }>(
  candidates: C[],
  limit: number,
  shares: Shares,
  inFlight: InFlight,
): C[] {
  const keys = new Map(inFlight.keys);
  const endpoints = new Map(inFlight.endpoints);
  const wanted: C[] = [];
  for (const c of candidates) {
    if (wanted.length === limit) break;
    const [byKey, byEndpoint] = [keys.get(c.key_id) ?? 0, endpoints.get(c.endpoint_id) ?? 0];
    if (byKey >= shares.perKey || byEndpoint >= shares.perEndpoint) continue;
    keys.set(c.key_id, byKey + 1);
    endpoints.set(c.endpoint_id, byEndpoint + 1);
    wanted.push(c);
  }
  return wanted;
}

/**
 * Every key's due deliveries but the moved clocks', within the
 * shares: each endpoint's first due, then each key's first of those.
 */
export async function dueCandidates(db: Db, at: string, limit: number, shares: Shares, inFlight: InFlight) {
  const full = (counts: ReadonlyMap<string, number>, share: number) =>
    [...counts].filter(([, n]) => n >= share).map(([id]) => id);
  const notIn = (column: string, ids: string[]) =>
    ids.length === 0 ? sql`` : sql`and ${sql.ref(column)} not in (${sql.join(ids)})`;
  // Each endpoint's first due, then each key's first of those: a key's dead endpoint does not hide its others.
  const { rows } = await sql<{ seq: number; endpoint_id: string; key_id: string }>`
    select seq, endpoint_id, key_id from (
      select seq, endpoint_id, key_id, next_attempt_at,
        row_number() over (partition by key_id order by next_attempt_at, seq) as key_rank
      from (
        select d.seq, d.endpoint_id, e.api_key_id as key_id, d.next_attempt_at,
          row_number() over (partition by d.endpoint_id order by d.next_attempt_at, d.seq) as endpoint_rank
        from webhook_deliveries d join webhook_endpoints e on e.id = d.endpoint_id
        where d.state = 'pending' and d.next_attempt_at <= ${at} and (d.claimed_until is null or d.claimed_until <= ${at}) and e.enabled = 1
          and e.api_key_id not in (select api_key_id from test_clocks)
          ${notIn('e.api_key_id', full(inFlight.keys, shares.perKey))} ${notIn('d.endpoint_id', full(inFlight.endpoints, shares.perEndpoint))}
      ) by_endpoint where endpoint_rank <= ${shares.perEndpoint}
    ) by_key where key_rank <= ${shares.perKey}
    order by next_attempt_at, seq limit ${limit + inFlight.keys.size * shares.perKey}`.execute(db);
  return rows;
}
