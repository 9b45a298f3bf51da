import { randomBytes } from 'node:crypto';
import type { Selectable } from 'kysely';
import type { Db } from '../db/database.js';
import type { WebhookEndpointsTable } from '../db/schema.js';
import type { EventType } from '../events/schemas.js';
import { ProblemError } from '../http/problems.js';
import type { Endpoint, EndpointPatch, NewEndpoint } from './schemas.js';
import { MAX_ENDPOINTS_PER_KEY } from './schemas.js';
import { newSecret, secretHint } from './signature.js';

/** How long a rotated-out secret keeps signing beside the new one. */
export const ROTATION_OVERLAP_MS = 24 * 60 * 60 * 1000;

export interface EndpointWithSecret extends Endpoint {
  secret: string;
}

/**
 * What a delivery needs of its endpoint: where, the secrets that
 * sign it now, and the version its owner's key is pinned to.
 */
export interface Destination {
  id: string;
  url: string;
  secrets: string[];
  livemode: boolean;
  apiVersion: string;
}

/**
 * A key's webhook endpoints. Every query is scoped by the owner: another key's endpoint does not exist
 * here. The secret is answered whole only when it is made (`create`, `rotate`).
 */
export class EndpointsRepository {
  constructor(private readonly db: Db) {}

  /** The same, in a transaction (an idempotent write's). */
  withStore(db: Db): EndpointsRepository {
    return new EndpointsRepository(db);
  }

  async create(owner: string, livemode: boolean, input: NewEndpoint, now: number): Promise<EndpointWithSecret> {
    const { n } = await this.db
      .selectFrom('webhook_endpoints')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('api_key_id', '=', owner)
      .executeTakeFirstOrThrow();
    if (Number(n) >= MAX_ENDPOINTS_PER_KEY) {
      throw new ProblemError(
        'webhook-endpoint-limit',
        `A key has at most ${MAX_ENDPOINTS_PER_KEY} webhook endpoints; delete one to add another.`,
      );
    }
    const row = {
      id: `we_${randomBytes(12).toString('hex')}`,
      api_key_id: owner,
      url: input.url,
      description: input.description ?? '',
      events: subscribedOf(input.events),
      secret: newSecret(),
      previous_secret: null,
      previous_until: null,
      livemode: livemode ? 1 : 0,
      created_at: new Date(now).toISOString(),
    };
    await this.db.insertInto('webhook_endpoints').values(row).execute();
    return { ...toEndpoint({ ...row, enabled: 1, disabled_reason: null, failed_in_row: 0 }), secret: row.secret };
  }

  async find(owner: string, id: string): Promise<Endpoint | undefined> {
    const row = await this.db
      .selectFrom('webhook_endpoints')
      .selectAll()
      .where('api_key_id', '=', owner)
      .where('id', '=', id)
      .executeTakeFirst();
    return row && toEndpoint(row);
  }

  /** The key's endpoints in the order of their ids, after `afterId` (a page of `limit`, and whether more follow). */
  async list(owner: string, afterId: string, limit: number): Promise<{ rows: Endpoint[]; more: boolean }> {
    const rows = await this.db
      .selectFrom('webhook_endpoints')
      .selectAll()
      .where('api_key_id', '=', owner)
      .where('id', '>', afterId)
      .orderBy('id')
      .limit(limit + 1)
      .execute();
    return { rows: rows.slice(0, limit).map(toEndpoint), more: rows.length > limit };
  }

  /** Changes what the patch names; `enabled: true` also forgets the failures that disabled it. */
  async update(owner: string, id: string, patch: EndpointPatch): Promise<Endpoint | undefined> {
    await this.db
      .updateTable('webhook_endpoints')
      .set({
        ...(patch.url === undefined ? {} : { url: patch.url }),
        ...(patch.description === undefined ? {} : { description: patch.description }),
        ...(patch.events === undefined ? {} : { events: subscribedOf(patch.events ?? undefined) }),
        ...(patch.enabled === undefined
          ? {}
          : patch.enabled
            ? { enabled: 1, disabled_reason: null, failed_in_row: 0 }
            : { enabled: 0, disabled_reason: 'by-request' }),
      })
      .where('api_key_id', '=', owner)
      .where('id', '=', id)
      .execute();
    return this.find(owner, id);
  }

  async delete(owner: string, id: string): Promise<boolean> {
    const { numDeletedRows } = await this.db
      .deleteFrom('webhook_endpoints')
      .where('api_key_id', '=', owner)
      .where('id', '=', id)
      .executeTakeFirst();
    return numDeletedRows > 0n;
  }

  /** A new secret; the one it replaces keeps signing beside it for `ROTATION_OVERLAP_MS`. */
  async rotate(owner: string, id: string, now: number): Promise<EndpointWithSecret | undefined> {
    const found = await this.db
      .selectFrom('webhook_endpoints')
      .select('secret')
      .where('api_key_id', '=', owner)
      .where('id', '=', id)
      .executeTakeFirst();
    if (!found) return undefined;
    const secret = newSecret();
    await this.db
      .updateTable('webhook_endpoints')
      .set({ secret, previous_secret: found.secret, previous_until: new Date(now + ROTATION_OVERLAP_MS).toISOString() })
      .where('api_key_id', '=', owner)
      .where('id', '=', id)
      .execute();
    return { ...(await this.find(owner, id))!, secret };
  }

  /** Where an endpoint's deliveries go and the secrets in force at `now`; undefined once it is gone. */
  async destination(id: string, now: number): Promise<Destination | undefined> {
    const row = await this.db
      .selectFrom('webhook_endpoints')
      .innerJoin('api_keys', 'api_keys.id', 'webhook_endpoints.api_key_id')
      .select(['webhook_endpoints.id', 'url', 'secret', 'previous_secret', 'previous_until', 'livemode', 'api_version'])
      .where('webhook_endpoints.id', '=', id)
      .executeTakeFirst();
    if (!row) return undefined;
    const previous =
      row.previous_secret && row.previous_until && Date.parse(row.previous_until) > now ? [row.previous_secret] : [];
    return {
      id: row.id,
      url: row.url,
      secrets: [row.secret, ...previous],
      livemode: row.livemode === 1,
      apiVersion: row.api_version,
    };
  }
}

/**
 * `,a,b,` for a list of types (the store matches a type with `like '%,type,%'`: migration 006); null for every type.
 */
function subscribedOf(types: readonly EventType[] | undefined): string | null {
  return types === undefined ? null : `,${types.join(',')},`;
}

function toEndpoint(
  row: Omit<Selectable<WebhookEndpointsTable>, 'api_key_id' | 'previous_secret' | 'previous_until' | 'livemode'>,
): Endpoint {
  return {
    id: row.id,
    url: row.url,
    description: row.description,
    events: row.events === null ? null : (row.events.split(',').filter(Boolean) as EventType[]),
    enabled: row.enabled === 1,
    disabledReason: row.disabled_reason as Endpoint['disabledReason'],
    secretHint: secretHint(row.secret),
    createdAt: row.created_at,
  };
}
