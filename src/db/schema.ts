import type { ColumnType, Generated } from 'kysely';

/**
 * The tables as Kysely sees them. Instants are ISO 8601 strings and booleans are 0/1 so that SQLite
 * and PostgreSQL share one query code path; repositories turn rows into records.
 */
export interface Database {
  api_keys: ApiKeysTable;
  pets: PetsTable;
  orders: OrdersTable;
  idempotency_records: IdempotencyTable;
  events: EventsTable;
  event_heads: EventHeadsTable;
  webhook_endpoints: WebhookEndpointsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  service_secrets: ServiceSecretsTable;
  test_clocks: TestClocksTable;
  test_scripts: TestScriptsTable;
  test_script_uses: TestScriptUsesTable;
  oauth_signing_keys: OAuthSigningKeysTable;
  request_log: RequestLogTable;
}

/** A test key's exchange (request-log/): its entry as JSON, and what listings filter and order by. */
export interface RequestLogTable {
  seq: Generated<number>;
  api_key_id: string;
  request_id: string;
  received_at: number;
  method: string;
  path: string;
  status: number | null;
  checks: string;
  entry: string;
}

/** A signing key of access tokens (oauth/signing-keys.ts): its JWKs as JSON, when it signs (ms since the epoch). */
export interface OAuthSigningKeysTable {
  kid: string;
  not_before: number;
  not_after: number;
  public_jwk: string;
  private_jwk: string;
}

/** A test key's clock, once a test moved it (clock.ts `KeyClock`, test-mode/): none is the real time. */
export interface TestClocksTable {
  api_key_id: string;
  offset_ms: number;
  frozen_at: number | null;
}

/** A test key's armed script (scenarios/): its steps (JSON), the step in use and its uses so far. */
export interface TestScriptsTable {
  api_key_id: string;
  scenario: string | null;
  steps: string;
  position: number;
  uses: number;
  /** Counts the armings of the key: a use claims the step of one arming only. */
  armed: number;
}

/** One use of a step of a test key's script, in order. */
export interface TestScriptUsesTable {
  api_key_id: string;
  seq: number;
  step: number;
  request_id: string;
  at: string;
}

/** Secrets of the service, made by a migration and shared by every instance on the store (never shown). */
export interface ServiceSecretsTable {
  name: string;
  /** Base64 of random bytes. */
  value: string;
}

export interface ApiKeysTable {
  id: string;
  name: string;
  plan: string;
  per_minute: number | null;
  per_day: number | null;
  /** SHA-256 of the full key, hex. The key itself is never stored. */
  key_hash: string;
  /** What the admin sees of the key, e.g. `pet_Ab3x…`. */
  key_prefix: string;
  created_at: string;
  revoked_at: string | null;
  /** Raised by every unban, so that each instance notices an unban made anywhere on its next request. */
  unban_seq: ColumnType<number, number | undefined, number>;
  /** 1 for a test key (`pet_test_…`, see faults/), else 0. */
  test: ColumnType<number, number | undefined, number>;
  /** A test key's standing fault profile, as JSON (faults/profile.ts); null for none. */
  fault_profile: ColumnType<string | null, string | null | undefined, string | null>;
  /** The version the key is pinned to, `YYYY-MM-DD` (versions/). */
  api_version: ColumnType<string, string | undefined, string>;
  /** The test key that made this one (`POST /test-keys`, test-mode/); null for any other key. */
  parent_id: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface PetsTable {
  id: Generated<number>;
  name: string;
  category_id: number;
  category_name: string;
  /** JSON array of strings. */
  photo_urls: string;
  /** JSON array of `{id, name}`. */
  tags: string;
  status: string;
}

export interface OrdersTable {
  id: Generated<number>;
  api_key_id: string;
  pet_id: number;
  quantity: number;
  ship_date: string;
  status: string;
  complete: number;
  created_at: string;
  /** When the order's next move falls due by itself (orders/lifecycle.ts); null when none will. */
  due_at: ColumnType<string | null, string | null | undefined, string | null>;
  /** When the order entered its state; null until it first moved (it entered `placed` at `created_at`). */
  moved_at: ColumnType<string | null, string | null | undefined, string | null>;
  /** The order's newest event, kept by the store as events are written (migration 005). */
  last_event_seq: ColumnType<number | null, never, never>;
}

export interface IdempotencyTable {
  api_key_id: string;
  idempotency_key: string;
  /**
   * SHA-256 of what the request asked (its operation and canonical body): the same key with another request is refused.
   */
  request_hash: string;
  /** The original response's status and body, replayed as they were. */
  status: number;
  response_body: string;
  /** The order the request made or changed, if any. */
  order_id: number | null;
  created_at: string;
}

export interface EventsTable {
  /** The order of writing; with `nonce`, the event's id (events/ids.ts). */
  seq: Generated<number>;
  nonce: string;
  /** The key's previous event, and the order's: events are read by walking back (migration 005). */
  prev_seq: number | null;
  prev_of_order: number | null;
  api_key_id: string;
  order_id: number | null;
  type: string;
  created_at: string;
  /** 0 for a test key's event. */
  livemode: number;
  /** What an event not about an order carries, as JSON (`webhook.test`); null for an order's. */
  data: ColumnType<string | null, string | null | undefined, string | null>;
}

/** Each key's newest event, kept by the store as events are written (migration 005). */
export interface EventHeadsTable {
  api_key_id: string;
  last_seq: number;
}

export interface WebhookEndpointsTable {
  id: string;
  api_key_id: string;
  url: string;
  description: string;
  /** `,order.placed,order.approved,`; null for every type. */
  events: string | null;
  enabled: ColumnType<number, number | undefined, number>;
  disabled_reason: string | null;
  secret: string;
  previous_secret: string | null;
  previous_until: string | null;
  failed_in_row: ColumnType<number, number | undefined, number>;
  /** 0 for a test key's endpoint (its own retry schedule). */
  livemode: number;
  created_at: string;
}

export interface WebhookDeliveriesTable {
  seq: Generated<number>;
  endpoint_id: string;
  event_seq: number;
  /** `pending`, `succeeded` or `failed`. */
  state: string;
  /** JSON array of `{at, status | error, ms}`. */
  attempts: string;
  attempt_count: number;
  next_attempt_at: string | null;
  claimed_until: string | null;
  created_at: string;
}
