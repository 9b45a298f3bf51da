import { type ClockedKey, clockedCandidates, clockedKeys } from './clocked.js';
import type { Selectable } from 'kysely';
import type { Db } from '../db/database.js';
import { transactionsOf } from '../db/group-commit.js';
import type { WebhookDeliveriesTable } from '../db/schema.js';
import { eventIdOf } from '../events/ids.js';
import type { EventType } from '../events/schemas.js';
import type { Attempt, Delivery } from './schemas.js';
import { dueCandidates, type InFlight, type Shares, withinShares } from './shares.js';

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
      : await dueCandidates(this.db, at, limit, shares, inFlight);
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
