import { type ClockedKey, clockedCandidates, clockedKeys } from './clocked.js';
import { type Selectable, sql } from 'kysely';
import type { Db } from '../db/database.js';
import { transactionsOf } from '../db/group-commit.js';
import type { WebhookDeliveriesTable } from '../db/schema.js';
import { eventIdOf } from '../events/ids.js';
import type { EventType } from '../events/schemas.js';
import type { Attempt, Delivery } from './schemas.js';

/** A delivery an instance has claimed: it alone attempts it until `claimedUntil`. */
export interface Claimed {
  seq: number;
  /** The key that owns its endpoint. */
  keyId: string;
  endpointId: string;
  eventSeq: number;
  attempts: Attempt[];
  claimedUntil: string;
  /**
   * For a test key whose clock a test moved: when the attempt
   * fell due in its time, the instant it is made at (test-mode/).
   */
  dueAt?: number;
}

/** What an attempt decided: the delivery's state after it, and what it does to its endpoint. */
export interface Recorded {
  attempt: Attempt;
  state: 'pending' | 'succeeded' | 'failed';
  nextAttemptAt: number | null;
  /**
   * What it does to the endpoint: `succeeded` and `failed` reset
   * or add to its failures in a row, `gone` (a 410) disables it.
   */
  endpoint: 'succeeded' | 'failed' | 'gone' | 'unchanged';
}

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
function withinShares<C extends { endpoint_id: string; key_id: string }>(
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

const ID_PREFIX = 'dlv_';

export function deliveryIdOf(seq: number): string {
  return `${ID_PREFIX}${seq.toString(36)}`;
}

export function seqOfDeliveryId(id: string): number {
  return parseInt(id.slice(ID_PREFIX.length), 36);
}

/**
 * Deliveries: one per event and endpoint subscribed when the event was written (the store writes it:
 * migration 006), each attempted until it succeeds or its schedule runs out. An instance claims a
 * delivery before attempting it, for longer than an attempt can take; a claim that lapses (its
 * instance gone mid-attempt) lets another instance attempt it again, with the same `webhook-id`.
 */
export class DeliveriesRepository {
  constructor(private readonly db: Db) {}

  /** The same, in a transaction (an idempotent write's). */
  withStore(db: Db): DeliveriesRepository {
    return new DeliveriesRepository(db);
  }

  /**
   * Claims up to `limit` deliveries due at `now` of enabled endpoints, the longest due first, within
   * the shares: no key beyond `shares.perKey` attempts at once and no endpoint beyond
   * `shares.perEndpoint`, counting those `inFlight` already (one key's thousands waiting, or its dead
   * endpoints, take only its own share). A delivery another instance claims meanwhile is not claimed
   * here: the claim says which states and claims it takes, and the store makes one writer win.
   */
  async claim(
    now: number,
    until: number,
    limit: number,
    shares: Shares,
    inFlight: InFlight,
    clocked?: ClockedKey,
  ): Promise<Claimed[]> {
    const at = new Date(now).toISOString();
    // A key whose clock a test moved is claimed alone, due by its now; the others by the real time, without it.
    const due = clocked ? new Date(clocked.now).toISOString() : at;
    const candidates = clocked
      ? await clockedCandidates(this.db, clocked.keyId, { due, at, limit, shares })
      : await this.#dueCandidates(at, limit, shares, inFlight);
    const wanted = withinShares(candidates, limit, shares, inFlight);
    if (wanted.length === 0) return [];
    const keyOfSeq = new Map(wanted.map((c) => [c.seq, c.key_id]));
    const claimedUntil = new Date(until).toISOString();
    const claimed = await this.db
      .updateTable('webhook_deliveries')
      .set({ claimed_until: claimedUntil })
      .where(
        'seq',
        'in',
        wanted.map((c) => c.seq),
      )
      .where('state', '=', 'pending')
      .where((eb) => eb.or([eb('claimed_until', 'is', null), eb('claimed_until', '<=', at)]))
      .returning(['seq', 'endpoint_id', 'event_seq', 'attempts', 'next_attempt_at'])
      .execute();
    return claimed.map((row) => ({
      seq: row.seq,
      keyId: keyOfSeq.get(row.seq)!,
      endpointId: row.endpoint_id,
      eventSeq: Number(row.event_seq),
      attempts: JSON.parse(row.attempts) as Attempt[],
      claimedUntil,
      ...(clocked ? { dueAt: Date.parse(row.next_attempt_at!) } : {}),
    }));
  }

  /**
   * Every key's due deliveries but the moved clocks', within the
   * shares: each endpoint's first due, then each key's first of those.
   */
  async #dueCandidates(at: string, limit: number, shares: Shares, inFlight: InFlight) {
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
      order by next_attempt_at, seq limit ${limit + inFlight.keys.size * shares.perKey}`.execute(this.db);
    return rows;
  }

  /**
   * The test keys whose clock a test moved with deliveries waiting, each with its now at the real `now` (./clocked.ts).
   */
  clockedKeys(now: number): Promise<ClockedKey[]> {
    return clockedKeys(this.db, now);
  }

  /**
   * Writes what an attempt decided, if the claim it was made under still holds, with its endpoint's
   * count of deliveries failed in a row (which disables it at `disableAfter`, as a `410` does at once).
   * Answers whether the endpoint was disabled by it.
   */
  async record(claimed: Claimed, recorded: Recorded, disableAfter: number): Promise<boolean> {
    return transactionsOf(this.db).run(async (trx) => {
      const written = await trx
        .updateTable('webhook_deliveries')
        .set({
          state: recorded.state,
          attempts: JSON.stringify([...claimed.attempts, recorded.attempt]),
          attempt_count: claimed.attempts.length + 1,
          next_attempt_at: recorded.nextAttemptAt === null ? null : new Date(recorded.nextAttemptAt).toISOString(),
          claimed_until: null,
        })
        .where('seq', '=', claimed.seq)
        .where('claimed_until', '=', claimed.claimedUntil)
        .executeTakeFirst();
      if (written.numUpdatedRows === 0n || recorded.endpoint === 'unchanged') return false;
      const endpoints = trx.updateTable('webhook_endpoints').where('id', '=', claimed.endpointId);
      if (recorded.endpoint === 'succeeded') {
        await endpoints.set({ failed_in_row: 0 }).execute();
        return false;
      }
      if (recorded.endpoint === 'gone') {
        await endpoints.set({ enabled: 0, disabled_reason: 'gone' }).where('enabled', '=', 1).execute();
        return true;
      }
      const failing = await endpoints
        .set((eb) => ({ failed_in_row: eb('failed_in_row', '+', 1) }))
        .returning(['failed_in_row', 'enabled'])
        .executeTakeFirst();
      if (!failing || failing.enabled !== 1 || failing.failed_in_row < disableAfter) return false;
      await trx
        .updateTable('webhook_endpoints')
        .set({ enabled: 0, disabled_reason: 'failing' })
        .where('id', '=', claimed.endpointId)
        .execute();
      return true;
    });
  }

  /** An endpoint's deliveries, newest first, after the cursor's (`afterSeq`, 0 for the newest). */
  async list(
    owner: string,
    endpointId: string,
    afterSeq: number,
    limit: number,
  ): Promise<{ rows: Array<{ seq: number; delivery: Delivery }>; more: boolean }> {
    let query = this.#owned(owner).where('d.endpoint_id', '=', endpointId);
    if (afterSeq > 0) query = query.where('d.seq', '<', afterSeq);
    const rows = await query
      .orderBy('d.seq', 'desc')
      .limit(limit + 1)
      .execute();
    return {
      rows: rows.slice(0, limit).map((row) => ({ seq: row.seq, delivery: toDelivery(row) })),
      more: rows.length > limit,
    };
  }

  async find(owner: string, endpointId: string, seq: number): Promise<Delivery | undefined> {
    const row = await this.#owned(owner)
      .where('d.endpoint_id', '=', endpointId)
      .where('d.seq', '=', seq)
      .executeTakeFirst();
    return row && toDelivery(row);
  }

  /** Makes a delivery due now, whatever its state: its next attempt goes out within a second. */
  async retryNow(owner: string, endpointId: string, seq: number, now: number): Promise<Delivery | undefined> {
    if (!(await this.find(owner, endpointId, seq))) return undefined;
    await this.db
      .updateTable('webhook_deliveries')
      .set({ state: 'pending', next_attempt_at: new Date(now).toISOString() })
      .where('seq', '=', seq)
      .execute();
    return this.find(owner, endpointId, seq);
  }

  /** A delivery of one event to one endpoint, due now (`webhook.test`, which the store does not fan out). */
  async add(trx: Db, endpointId: string, eventSeq: number, now: number): Promise<number> {
    const at = new Date(now).toISOString();
    const row = await trx
      .insertInto('webhook_deliveries')
      .values({
        endpoint_id: endpointId,
        event_seq: eventSeq,
        state: 'pending',
        attempts: '[]',
        attempt_count: 0,
        next_attempt_at: at,
        created_at: at,
      })
      .returning('seq')
      .executeTakeFirstOrThrow();
    return row.seq;
  }

  /** How many deliveries are due at `now` (a clocked key's: at its now) and in no instance's hands. */
  async due(now: number, clocked?: ClockedKey): Promise<number> {
    const at = new Date(now).toISOString();
    let query = this.db
      .selectFrom('webhook_deliveries as d')
      .innerJoin('webhook_endpoints as e', 'e.id', 'd.endpoint_id')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('d.state', '=', 'pending')
      .where('d.next_attempt_at', '<=', clocked ? new Date(clocked.now).toISOString() : at)
      .where((eb) => eb.or([eb('d.claimed_until', 'is', null), eb('d.claimed_until', '<=', at)]));
    query = clocked
      ? query.where('e.api_key_id', '=', clocked.keyId)
      : query.where('e.api_key_id', 'not in', (eb) => eb.selectFrom('test_clocks').select('api_key_id'));
    const { n } = await query.executeTakeFirstOrThrow();
    return Number(n);
  }

  /** How many deliveries wait (metrics). */
  async pending(): Promise<number> {
    const { n } = await this.db
      .selectFrom('webhook_deliveries')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('state', '=', 'pending')
      .executeTakeFirstOrThrow();
    return Number(n);
  }

  #owned(owner: string) {
    return this.db
      .selectFrom('webhook_deliveries as d')
      .innerJoin('webhook_endpoints as w', 'w.id', 'd.endpoint_id')
      .innerJoin('events as e', 'e.seq', 'd.event_seq')
      .select(['d.seq', 'd.event_seq', 'd.state', 'd.attempts', 'd.next_attempt_at', 'e.nonce', 'e.type'])
      .where('w.api_key_id', '=', owner);
  }
}

type DeliveryRow = Pick<
  Selectable<WebhookDeliveriesTable>,
  'seq' | 'event_seq' | 'state' | 'attempts' | 'next_attempt_at'
> & { nonce: string; type: string };

function toDelivery(row: DeliveryRow): Delivery {
  return {
    id: deliveryIdOf(row.seq),
    eventId: eventIdOf(Number(row.event_seq), row.nonce),
    type: row.type as EventType,
    state: row.state as Delivery['state'],
    attempts: JSON.parse(row.attempts) as Attempt[],
    nextAttemptAt: row.state === 'pending' ? row.next_attempt_at : null,
  };
}
