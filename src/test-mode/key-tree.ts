import { sql } from 'kysely';
import type { Db } from '../db/database.js';
import { ProblemError } from '../http/problems.js';
import type { Policy } from '../ratelimit/plans.js';

/**
 * The tree of child test keys (docs/testing-clients.md#testing-your-client-in-seconds): a test key's
 * children, theirs, and so on, under the root test key that no key made. Both bounds hold among the keys
 * alive (not revoked): so many children a key, and so many descendants a root, however deep they nest.
 */

/** The most children a test key has alive at once. */
export const MAX_CHILDREN = 100;
/** The most descendants a root test key has alive at once, at every depth. */
export const MAX_DESCENDANTS = 1_000;

/** The root of the key's tree: the key itself when no key made it. */
export async function rootOf(db: Db, keyId: string): Promise<string> {
  const { rows } = await sql<{ id: string }>`
    with recursive up(id, parent_id) as (
      select id, parent_id from api_keys where id = ${keyId}
      union all
      select k.id, k.parent_id from api_keys k join up on k.id = up.parent_id
    )
    select id from up where parent_id is null`.execute(db);
  return rows[0]?.id ?? keyId;
}

/** How many keys alive the root has below it, at every depth. */
export async function aliveDescendants(db: Db, rootId: string): Promise<number> {
  const { rows } = await sql<{ n: number | string }>`
    with recursive down(id) as (
      select id from api_keys where parent_id = ${rootId} and revoked_at is null
      union all
      select k.id from api_keys k join down on k.parent_id = down.id where k.revoked_at is null
    )
    select count(*) as n from down`.execute(db);
  return Number(rows[0]?.n ?? 0);
}

/** The refusal of one more key in a tree that holds as many as it may. */
export function treeFull(children: number, descendants: number): ProblemError | undefined {
  if (children >= MAX_CHILDREN)
    return new ProblemError(
      'test-key-limit',
      `Your key has ${MAX_CHILDREN} child keys alive: delete one (DELETE /test-keys/{keyId}) or reset ` +
        `(DELETE /test-data).`,
    );
  if (descendants >= MAX_DESCENDANTS)
    return new ProblemError(
      'test-key-limit',
      `Your root test key has ${MAX_DESCENDANTS} keys alive below it, at every depth: delete some ` +
        `(DELETE /test-keys/{keyId}) or reset the root (DELETE /test-data).`,
    );
  return undefined;
}

/** What a child may be asked to have instead of its parent's limits: lower ones, never higher. */
export interface AskedLimits {
  perMinute?: number;
  perDay?: number;
}

/**
 * A child's own limits, when asked for: each at most its parent's (a `400` naming the member otherwise);
 * what is not asked for is the parent's.
 */
export function childLimits(parent: Policy, asked: AskedLimits | undefined): { perMinute: number; perDay: number } {
  const limits = { perMinute: asked?.perMinute ?? parent.perMinute, perDay: asked?.perDay ?? parent.perDay };
  const over = (['perMinute', 'perDay'] as const).filter((name) => limits[name] > parent[name]);
  if (over.length > 0)
    throw new ProblemError('invalid-request', 'A child test key may have lower limits than your key, never higher.', {
      errors: over.map((name) => ({ in: 'body', name, message: `must be at most ${parent[name]}, your key's` })),
    });
  return limits;
}
