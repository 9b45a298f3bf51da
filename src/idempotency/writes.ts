import { createHash } from 'node:crypto';
import type { Clock } from '../clock.js';
import type { Owner } from '../keys/identify.js';
import { callerNow, type KeyClock } from '../clock.js';
import type { Db } from '../db/database.js';
import { isUniqueViolation } from '../db/errors.js';
import { type Transactions, transactionsOf } from '../db/group-commit.js';
import { ProblemError } from '../http/problems.js';
import { IDEMPOTENCY_WINDOW_IN_WORDS, IDEMPOTENCY_WINDOW_MS } from './window.js';

/** What a write answers when it succeeds: remembered whole under its idempotency key, if it has one. */
export interface Response<T> {
  status: number;
  body: T;
  /** The order the write made or changed, if any. */
  orderId?: number;
}

export interface Answered<T> extends Response<T> {
  /** True when this is the replay of an earlier request with the same idempotency key. */
  replayed: boolean;
}

/**
 * The writes of the API that honour `Idempotency-Key` (draft-ietf-httpapi-idempotency-key-header): each
 * runs in a transaction, and with a key its response is written in the same transaction, so that a
 * crash leaves both or neither. The same key and request within `IDEMPOTENCY_WINDOW_MS` get the
 * original response; the same key with another request a `422`; a retry while the original is still
 * being processed here a `409`. Only successes are remembered: a request refused (a `404`, a `409`)
 * may be retried with the same key once what refused it has changed. Keys are the caller's own: one
 * key's records are invisible to every other.
 */
export class IdempotentWrites {
  readonly #transactions: Transactions;
  /** The idempotency keys of requests this process is running now, by owner. */
  readonly #inProgress = new Set<string>();

  constructor(
    db: Db,
    private readonly clock: Clock,
  ) {
    this.#transactions = transactionsOf(db);
  }

  /**
   * Runs `write` in a transaction. `fingerprint` names what the request asks (`fingerprintOf`), worked
   * out only for a request with a key: the same key sent with another fingerprint is refused. `read`,
   * if given, runs first, outside the transaction (on SQLite a transaction holds the only connection,
   * which a read through the store would wait for), and hands `write` what it read.
   */
  async run<T, R = undefined>(
    owner: Owner,
    idempotencyKey: string | undefined,
    fingerprint: () => string,
    write: (trx: Db, read: R) => Promise<Response<T>>,
    read?: () => R | Promise<R>,
  ): Promise<Answered<T>> {
    if (idempotencyKey === undefined) {
      const found = (await read?.()) as R;
      return answered(await this.#transactions.run((trx) => write(trx, found)), false);
    }
    // A retry while the original is still being processed here gets a 409. Across instances the
    // store's unique key makes the later one wait, fail, and replay the first one's response.
    const slot = `${owner.id}\u0000${idempotencyKey}`;
    if (this.#inProgress.has(slot))
      throw new ProblemError(
        'idempotency-key-in-progress',
        'A request with this Idempotency-Key is still being processed; retry in a moment.',
      );
    this.#inProgress.add(slot);
    const remembered = { owner: owner.id, key: idempotencyKey, fingerprint: fingerprint(), now: owner.clock };
    try {
      const found = (await read?.()) as R;
      const once = (trx: Db) => this.#once(trx, remembered, (t) => write(t, found));
      try {
        return await this.#transactions.run(once);
      } catch (error) {
        if (!isUniqueViolation(error)) throw error;
        return await this.#transactions.run(once);
      }
    } finally {
      this.#inProgress.delete(slot);
    }
  }

  async #once<T>(
    trx: Db,
    { owner, key, fingerprint, now: clock }: Remembered,
    write: (trx: Db) => Promise<Response<T>>,
  ): Promise<Answered<T>> {
    // The window in the owner's time (a test key's clock, test-mode/).
    const now = callerNow(clock, this.clock());
    const earlier = await trx
      .selectFrom('idempotency_records')
      .select(['request_hash', 'status', 'response_body', 'order_id', 'created_at'])
      .where('api_key_id', '=', owner)
      .where('idempotency_key', '=', key)
      .executeTakeFirst();
    if (earlier && Date.parse(earlier.created_at) > now - IDEMPOTENCY_WINDOW_MS) {
      if (earlier.request_hash !== fingerprint) {
        throw new ProblemError(
          'idempotency-key-reused',
          `This Idempotency-Key was used with another request in the last ${IDEMPOTENCY_WINDOW_IN_WORDS}.`,
        );
      }
      return answered(
        {
          status: earlier.status,
          body: JSON.parse(earlier.response_body) as T,
          orderId: earlier.order_id ?? undefined,
        },
        true,
      );
    }
    if (earlier)
      await trx
        .deleteFrom('idempotency_records')
        .where('api_key_id', '=', owner)
        .where('idempotency_key', '=', key)
        .execute();
    const response = await write(trx);
    await trx
      .insertInto('idempotency_records')
      .values({
        api_key_id: owner,
        idempotency_key: key,
        request_hash: fingerprint,
        status: response.status,
        order_id: response.orderId ?? null,
        response_body: JSON.stringify(response.body),
        created_at: new Date(now).toISOString(),
      })
      .execute();
    return answered(response, false);
  }
}

function answered<T>({ status, body, orderId }: Response<T>, replayed: boolean): Answered<T> {
  return { status, body, orderId, replayed };
}

interface Remembered {
  owner: string;
  key: string;
  fingerprint: string;
  /** The owner's clock, if a test key's. */
  now: KeyClock | undefined;
}

/**
 * What a request asks, as a digest: its operation and its body as the client meant it (member order
 * and white space do not make another request). `POST /store/orders` keeps the form its records had
 * before other operations honoured keys: its body alone.
 */
export function fingerprintOf(operation: 'placeOrder' | (string & {}), input: object = {}): string {
  const canonical = JSON.stringify(
    Object.keys(input)
      .sort()
      .map((k) => [k, input[k as keyof typeof input]]),
  );
  return createHash('sha256')
    .update(operation === 'placeOrder' ? canonical : `${operation} ${canonical}`)
    .digest('hex');
}
