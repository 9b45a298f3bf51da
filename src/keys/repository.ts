import { randomInt } from 'node:crypto';
import type { Selectable, UpdateQueryBuilder, UpdateResult } from 'kysely';
import type { Clock } from '../clock.js';
import type { ChangeFeed } from '../db/change-feed.js';
import type { Db } from '../db/database.js';
import type { ApiKeysTable, Database } from '../db/schema.js';
import { type FaultProfile, type FaultProfileInput, MAX_SEED, profileMistake, profileOf } from '../faults/profile.js';
import { MAX_LIMIT, type PlanName, type Policy, policyFor } from '../ratelimit/plans.js';
import { isVersion, NEWEST_VERSION, VERSIONS } from '../versions/versions.js';
import { displayPrefix, generateKey, generateKeyId, hashKey } from './key-format.js';

export interface KeyRecord {
  id: string;
  name: string;
  plan: PlanName;
  perMinute: number | null;
  perDay: number | null;
  prefix: string;
  createdAt: string;
  revokedAt: string | null;
  unbanSeq: number;
  /** A test key (`pet_test_…`): same plans and limits, its own orders, and faults on demand (faults/). */
  test: boolean;
  /** A test key's standing fault profile, or null. */
  faults: FaultProfile | null;
  /** The version its requests get when they name none (versions/). */
  apiVersion: string;
  /** The test key that made it (`POST /test-keys`), or null. */
  parentId: string | null;
}

/** A plan with, for enterprise only, the key's own numbers. */
export interface PlanChoice {
  plan: PlanName;
  perMinute?: number;
  perDay?: number;
}

/** A key's input the store would refuse, or that makes no sense; `field` names it (admin API: `/field`). */
export class KeyInputError extends Error {
  constructor(
    message: string,
    readonly field:
      'plan' | 'perMinute' | 'perDay' | 'name' | 'id' | 'apiVersion' | 'faults' | `faults/${string}` = 'plan',
  ) {
    super(message);
  }
}

export const NAME_MAX_LENGTH = 200;
/** No control characters: PostgreSQL cannot store NUL, and a name is printed on terminals. */
export const NAME_PATTERN = '^[^\\u0000-\\u001f\\u007f-\\u009f]*$';
const NAME = new RegExp(NAME_PATTERN, 'u');

export function policyOfKey(key: KeyRecord): Policy {
  return policyFor(key.plan, { perMinute: key.perMinute, perDay: key.perDay });
}

/**
 * Keys in the store. Every change is told to `changes` before the call returns, so that the keys
 * cached by this process (./key-cache.ts) apply it at the key's next request; other processes hear
 * it through the store (see db/change-feed.ts).
 */
export class KeysRepository {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly changes?: Pick<ChangeFeed, 'changed'>,
  ) {}

  /**
   * Returns the record and, this once, the full key. A fault profile is for a test key only; the version
   * is the newest unless given. A test key's child (`parentId`) may come with its key made by the caller
   * (test-mode/test-keys.ts), and is written through `db` (a transaction's).
   */
  async create(
    input: {
      name?: string;
      test?: boolean;
      faults?: FaultProfileInput;
      apiVersion?: string;
      parentId?: string;
      id?: string;
      key?: string;
      /** A child test key's own limits, lower than its plan's (test-mode/key-tree.ts checks them). */
      lowered?: { perMinute: number; perDay: number };
    } & PlanChoice,
    db: Db = this.db,
  ): Promise<{ record: KeyRecord; key: string }> {
    const limits = input.parentId && input.lowered ? input.lowered : checkedLimits(input);
    const apiVersion = checkedVersion(input.apiVersion ?? NEWEST_VERSION);
    const test = input.test === true;
    if (input.faults && !test)
      throw new KeyInputError('a fault profile is for test keys only (create the key as a test key)', 'faults');
    const faults = input.faults ? this.#profile(input.faults) : null;
    const key = input.key ?? generateKey(test);
    const row = {
      id: input.id ?? generateKeyId(),
      name: checkedName(input.name) || `${input.plan} key`,
      plan: input.plan,
      per_minute: limits.perMinute,
      per_day: limits.perDay,
      key_hash: hashKey(key),
      key_prefix: displayPrefix(key),
      created_at: new Date(this.clock()).toISOString(),
      revoked_at: null,
      test: test ? 1 : 0,
      fault_profile: faults && JSON.stringify(faults),
      api_version: apiVersion,
      parent_id: input.parentId ?? null,
    };
    await db.insertInto('api_keys').values(row).execute();
    // Heard before this returns, so that the key works at once here (keys/known-keys.ts); in a
    // transaction, by the caller once it has committed (`created`): heard before, it would be read
    // before it is there.
    if (db === this.db) this.created(row.id);
    return { record: toRecord({ ...row, unban_seq: 0 }), key };
  }

  /** Tells the caches of a key created in a transaction, once it committed. */
  created(id: string): void {
    this.changes?.changed('api_keys', id);
  }

  async findByKey(key: string): Promise<KeyRecord | undefined> {
    return this.findByHash(hashKey(key));
  }

  async findByHash(hash: string): Promise<KeyRecord | undefined> {
    const row = await this.db.selectFrom('api_keys').selectAll().where('key_hash', '=', hash).executeTakeFirst();
    return row && toRecord(row);
  }

  /** The digests of every key, in their order, `limit` at a time after `after` (`''`: from the first). */
  async hashesAfter(after: string, limit: number): Promise<string[]> {
    const rows = await this.db
      .selectFrom('api_keys')
      .select('key_hash')
      .where('key_hash', '>', after)
      .orderBy('key_hash')
      .limit(limit)
      .execute();
    return rows.map((row) => row.key_hash);
  }

  async hashOf(id: string): Promise<string | undefined> {
    return (await this.db.selectFrom('api_keys').select('key_hash').where('id', '=', id).executeTakeFirst())?.key_hash;
  }

  async get(id: string): Promise<KeyRecord | undefined> {
    const row = await this.db.selectFrom('api_keys').selectAll().where('id', '=', id).executeTakeFirst();
    return row && toRecord(row);
  }

  async list(): Promise<KeyRecord[]> {
    const rows = await this.db.selectFrom('api_keys').selectAll().orderBy('created_at').orderBy('id').execute();
    return rows.map(toRecord);
  }

  async count(): Promise<number> {
    const { n } = await this.db
      .selectFrom('api_keys')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    return Number(n);
  }

  async setPlan(id: string, choice: PlanChoice): Promise<KeyRecord | undefined> {
    const limits = checkedLimits(choice);
    return this.#update(id, (row) =>
      row.set({ plan: choice.plan, per_minute: limits.perMinute, per_day: limits.perDay }),
    );
  }

  /** Pins the key to another version: its requests that name none get it from their next one, on every instance. */
  async setVersion(id: string, version: string): Promise<KeyRecord | undefined> {
    const apiVersion = checkedVersion(version);
    return this.#update(id, (row) => row.set({ api_version: apiVersion }));
  }

  /**
   * Sets (or, with null, removes) a test key's standing fault profile; its seeded sequence starts over
   * on every instance from the key's next request, even when the profile is the same as before.
   */
  async setFaults(id: string, input: FaultProfileInput | null): Promise<KeyRecord | undefined> {
    const found = await this.get(id);
    if (!found) return undefined;
    if (!found.test)
      throw new KeyInputError(`${id} is a live key: only test keys (pet_test_…) take a fault profile`, 'faults');
    const faults = input && this.#profile(input);
    return this.#update(id, (row) => row.set({ fault_profile: faults && JSON.stringify(faults) }));
  }

  /**
   * Starts a test key's fault sequence over, on every instance,
   * with its profile unchanged (a reset: test-mode/reset.ts).
   */
  async restartFaults(id: string): Promise<KeyRecord | undefined> {
    const found = await this.get(id);
    if (!found?.faults) return found;
    const faults = { ...found.faults, setAt: new Date(this.clock()).toISOString() };
    return this.#update(id, (row) => row.set({ fault_profile: JSON.stringify(faults) }));
  }

  /** Revoking twice keeps the first revocation time. */
  async revoke(id: string): Promise<KeyRecord | undefined> {
    return this.#update(id, (row) =>
      row.set({ revoked_at: new Date(this.clock()).toISOString() }).where('revoked_at', 'is', null),
    );
  }

  /** Signals every instance, through the store, to lift the key's ban on its next request. */
  async requestUnban(id: string): Promise<KeyRecord | undefined> {
    return this.#update(id, (row) => row.set((eb) => ({ unban_seq: eb('unban_seq', '+', 1) })));
  }

  #profile(input: FaultProfileInput): FaultProfile {
    const mistake = profileMistake(input);
    if (mistake) throw new KeyInputError(mistake.message, `faults/${mistake.field}`);
    return profileOf(input, new Date(this.clock()).toISOString(), () => randomInt(MAX_SEED));
  }

  /**
   * Changes the key's row, then tells the caches (every instance's,
   * through the change feed) before answering the record as it is now.
   */
  async #update(id: string, change: (row: KeyRowUpdate) => KeyRowUpdate): Promise<KeyRecord | undefined> {
    await change(this.db.updateTable('api_keys').where('id', '=', id)).execute();
    this.changes?.changed('api_keys', id);
    return this.get(id);
  }
}

type KeyRowUpdate = UpdateQueryBuilder<Database, 'api_keys', 'api_keys', UpdateResult>;

function checkedLimits(choice: PlanChoice): { perMinute: number | null; perDay: number | null } {
  const custom = choice.perMinute !== undefined || choice.perDay !== undefined;
  if (choice.plan !== 'enterprise') {
    if (custom)
      throw new KeyInputError(
        `the ${choice.plan} plan has fixed limits; per-minute and per-day are for enterprise keys only`,
      );
    return { perMinute: null, perDay: null };
  }
  const { perMinute, perDay } = choice;
  if (perMinute === undefined || perDay === undefined) {
    throw new KeyInputError(
      'an enterprise key needs its own per-minute and per-day limits (positive whole numbers)',
      perMinute === undefined ? 'perMinute' : 'perDay',
    );
  }
  for (const [field, n] of [
    ['perMinute', perMinute],
    ['perDay', perDay],
  ] as const) {
    if (!Number.isSafeInteger(n) || n < 1 || n > MAX_LIMIT) {
      throw new KeyInputError(
        `${field === 'perMinute' ? 'per-minute' : 'per-day'} must be a whole number from 1 to ${MAX_LIMIT}`,
        field,
      );
    }
  }
  return { perMinute, perDay };
}

function checkedVersion(version: string): string {
  if (!isVersion(version))
    throw new KeyInputError(`unknown version "${version}": the versions are ${VERSIONS.join(', ')}`, 'apiVersion');
  return version;
}

/** The name as stored (trimmed), or a KeyInputError. */
function checkedName(name: string | undefined): string | undefined {
  const trimmed = name?.trim();
  if (trimmed === undefined) return undefined;
  if (trimmed.length > NAME_MAX_LENGTH)
    throw new KeyInputError(`a name has at most ${NAME_MAX_LENGTH} characters`, 'name');
  if (!NAME.test(trimmed)) throw new KeyInputError('a name may not contain control characters', 'name');
  return trimmed;
}

function toRecord(row: Selectable<ApiKeysTable>): KeyRecord {
  return {
    id: row.id,
    name: row.name,
    plan: row.plan as PlanName,
    perMinute: row.per_minute,
    perDay: row.per_day,
    prefix: row.key_prefix,
    createdAt: row.created_at,
    revokedAt: row.revoked_at,
    unbanSeq: row.unban_seq,
    test: row.test === 1,
    faults: row.fault_profile === null ? null : (JSON.parse(row.fault_profile) as FaultProfile),
    apiVersion: row.api_version,
    parentId: row.parent_id,
  };
}
