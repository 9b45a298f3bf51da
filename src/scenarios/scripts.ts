import type { ChangeFeed } from '../db/change-feed.js';
import type { Db } from '../db/database.js';
import { transactionsOf } from '../db/group-commit.js';
import { HeldRows } from '../db/held-rows.js';
import type { Script, ScenarioStep } from './schemas.js';

/** A key's armed script, as the store holds it. */
export interface ArmedScript {
  readonly keyId: string;
  readonly scenario: string | null;
  readonly steps: readonly ScenarioStep[];
  /** The step the next matching request meets (`steps.length`: every step is used). */
  readonly position: number;
  /** Its uses so far. */
  readonly uses: number;
  /** Which arming of the key this is: a use claims a step of this arming only. */
  readonly armed: number;
}

/** How many requests a step meets. */
export const timesOf = (step: ScenarioStep): number => step.times ?? 1;

/**
 * Test keys' scripts (docs/testing-clients.md#scenarios-a-test-can-count-on), in the store that every instance
 * shares. A request uses a step by a compare-and-set of the script's place (its arming, step and uses), so that
 * two requests, on one instance or two, never use one step once too often, and each use is written down in
 * order. On the embedded store, where every change is heard before the next request, scripts are held in memory
 * too (a key without one as none), as test keys' clocks are (test-mode/clocks.ts); elsewhere each request of a
 * test key reads its key's. Live keys never read them.
 */
export class Scripts {
  readonly #held: HeldRows<ArmedScript | null>;

  constructor(
    private readonly db: Db,
    private readonly changes: Pick<ChangeFeed, 'immediate' | 'subscribe' | 'changed'>,
  ) {
    this.#held = new HeldRows('test_scripts', changes);
  }

  /** The key's armed script, or null: from memory when held, else read. */
  of(keyId: string): ArmedScript | null | Promise<ArmedScript | null> {
    // A key held without a script is held as null: only undefined is not held.
    const held = this.#held.get(keyId);
    return held !== undefined ? held : this.#held.read(keyId, () => this.#read(keyId));
  }

  /** Arms `steps` for the key, in place of any script before: a new arming, nothing used. */
  async arm(keyId: string, scenario: string | null, steps: readonly ScenarioStep[]): Promise<void> {
    await transactionsOf(this.db).run(async (trx) => {
      const before = await trx
        .selectFrom('test_scripts')
        .select('armed')
        .where('api_key_id', '=', keyId)
        .executeTakeFirst();
      const row = { scenario, steps: JSON.stringify(steps), position: 0, uses: 0, armed: (before?.armed ?? 0) + 1 };
      await trx.deleteFrom('test_script_uses').where('api_key_id', '=', keyId).execute();
      await trx
        .insertInto('test_scripts')
        .values({ api_key_id: keyId, ...row })
        .onConflict((conflict) => conflict.column('api_key_id').doUpdateSet(row))
        .execute();
    });
    this.changes.changed('test_scripts', keyId);
  }

  /** No script for the key any more (through `db`: a transaction's, when the key starts over). */
  async disarm(keyId: string, db: Db = this.db): Promise<void> {
    await db.deleteFrom('test_script_uses').where('api_key_id', '=', keyId).execute();
    await db.deleteFrom('test_scripts').where('api_key_id', '=', keyId).execute();
    this.changes.changed('test_scripts', keyId);
  }

  /**
   * Uses the current step of `script` for a request, if no other request used it first: true when this request
   * did. A use moves the script on (to the next step once this one was used `times` times) and is written down.
   */
  async use(script: ArmedScript, requestId: string, at: string): Promise<boolean> {
    const { keyId, steps, position, uses, armed } = script;
    const step = steps[position];
    if (step === undefined) return false;
    const next = uses + 1 >= timesOf(step) ? { position: position + 1, uses: 0 } : { position, uses: uses + 1 };
    const seq = steps.slice(0, position).reduce((sum, before) => sum + timesOf(before), 0) + uses + 1;
    const used = await transactionsOf(this.db).run(async (trx) => {
      const moved = await trx
        .updateTable('test_scripts')
        .set(next)
        .where('api_key_id', '=', keyId)
        .where('armed', '=', armed)
        .where('position', '=', position)
        .where('uses', '=', uses)
        .executeTakeFirst();
      if (Number(moved.numUpdatedRows) !== 1) return false;
      await trx
        .insertInto('test_script_uses')
        .values({ api_key_id: keyId, seq, step: position, request_id: requestId, at })
        .execute();
      return true;
    });
    // Won or lost, the script moved on: what is held of it is no longer what the store has.
    this.changes.changed('test_scripts', keyId);
    return used;
  }

  /** The key's script as `/test-scenario` answers it: none armed is an empty script, done. */
  async view(keyId: string): Promise<Script> {
    const script = await this.#read(keyId);
    if (script === null) return { scenario: null, steps: [], next: 0, used: [], done: true };
    const used = await this.db
      .selectFrom('test_script_uses')
      .select(['step', 'request_id', 'at'])
      .where('api_key_id', '=', keyId)
      .orderBy('seq')
      .execute();
    return {
      scenario: script.scenario,
      steps: [...script.steps],
      next: script.position,
      used: used.map((use) => ({ step: use.step, requestId: use.request_id, at: use.at })),
      done: script.position >= script.steps.length,
    };
  }

  async #read(keyId: string): Promise<ArmedScript | null> {
    const row = await this.db
      .selectFrom('test_scripts')
      .select(['scenario', 'steps', 'position', 'uses', 'armed'])
      .where('api_key_id', '=', keyId)
      .executeTakeFirst();
    return row
      ? {
          keyId,
          scenario: row.scenario,
          steps: JSON.parse(row.steps) as ScenarioStep[],
          position: Number(row.position),
          uses: Number(row.uses),
          armed: Number(row.armed),
        }
      : null;
  }
}
