import type { RouteOptions } from 'fastify';
import type { Clock } from './clock.js';
import type { PublicConfig } from './config.js';
import type { ChangeFeed } from './db/change-feed.js';
import type { Db } from './db/database.js';
import { serviceSecret } from './db/secrets.js';
import { EventLog } from './events/record.js';
import { EventsRepository } from './events/repository.js';
import { EventStreams } from './event-stream/hub.js';
import type { StreamSeats } from './event-stream/seats.js';
import { RETRY_MS } from './event-stream/stream.js';
import { keyNow } from './clock.js';
import { Cursors } from './http/pagination.js';
import { COMMON_PROBLEM_STATUSES, problemResponses } from './http/responses.js';
import { NoQuery } from './http/schemas.js';
import { IdempotentWrites } from './idempotency/writes.js';
import { KeyCache } from './keys/key-cache.js';
import { KeysRepository } from './keys/repository.js';
import { SigningKeys } from './oauth/signing-keys.js';
import { Tokens } from './oauth/tokens.js';
import { CLIENT_SCHEME, OAUTH_SCHEME, SECURITY_SCHEME } from './openapi/document.js';
import type { RouteConfig } from './http/stages.js';
import type { Metrics } from './ops/metrics.js';
import { OrderMoves } from './orders/moves.js';
import { OrderPages } from './orders/order-pages.js';
import { OrderPlacement } from './orders/placement.js';
import { PetCache } from './pets/pet-cache.js';
import { PetsRepository } from './pets/repository.js';
import { restampKeys } from './ratelimit/callers.js';
import type { LimiterStore } from './ratelimit/store.js';
import type { Cards } from './report-card/cards.js';
import type { ScenarioCatalogue } from './scenarios/schemas.js';
import type { RequestLog } from './request-log/log.js';
import { Scripts } from './scenarios/scripts.js';
import { TestClocks } from './test-mode/clocks.js';
import { TestData } from './test-mode/test-data.js';
import type { Versioning } from './versions/versioning.js';
import { DeliveriesRepository } from './webhooks/deliveries.js';
import { EndpointsRepository } from './webhooks/endpoints.js';

/** What the public app is built on: its settings, the store, the limiter, the metrics and the clock. */
export interface ServiceDeps {
  config: PublicConfig;
  db: Db;
  /** What tells the caches of keys and pets that a row changed (db/change-feed.ts). */
  changes: ChangeFeed;
  limiter: LimiterStore;
  metrics: Metrics;
  clock: Clock;
}

/** What the API's operations are built from. */
export interface ApiDeps extends ServiceDeps {
  versions: Versioning;
  records: ReturnType<typeof recordsOf>;
  cards: Cards;
  /** The catalogue of named scenarios (scenarios/catalogue.ts). */
  scenarios: ScenarioCatalogue;
  /** Test keys' exchanges (request-log/). */
  requestLog: RequestLog;
  /** The open event streams of each key, counted across instances (event-stream/). */
  seats: StreamSeats;
  warn: (fields: object, message: string) => void;
}

/** What the app reads records through, and what it holds of them in memory. */
export function recordsOf({
  config,
  db,
  changes,
  limiter,
  clock,
}: Pick<ApiDeps, 'config' | 'db' | 'changes' | 'limiter' | 'clock'>) {
  const keys = new KeysRepository(db, clock, changes);
  const pets = new PetsRepository(db);
  const signingKeys = new SigningKeys(db, clock, config.oauth);
  return {
    signingKeys,
    tokens: new Tokens(signingKeys, clock, { issuer: config.publicUrl, ttlMs: config.oauth.tokenTtlMs }),
    keys,
    keyCache: new KeyCache(keys, { feed: changes, clock, max: config.cache.keys }),
    pets,
    catalogue: new PetCache(pets, { feed: changes, clock, max: config.cache.pets }),
    clocks: new TestClocks(db, changes),
    scripts: new Scripts(db, changes),
    orderPages: new OrderPages({ feed: changes, max: config.cache.orderPages, stamped: limiter.stamps, clock }),
  };
}

/**
 * What the API's operations are built from, made once; each operation is handed the part it uses (./operations.ts).
 */
export async function operationParts(deps: ApiDeps) {
  const { config, db, changes, limiter, metrics, clock, versions, records, cards, scenarios, requestLog, seats, warn } =
    deps;
  const { orderPages, pets, catalogue, clocks, keys, scripts } = records;
  const writes = new IdempotentWrites(db, clock);
  const moves = OrderMoves.of(db, config.fulfilment, changes, metrics, restampKeys(limiter, changes));
  const placement = new OrderPlacement(writes, moves, clock, catalogue);
  const events = new EventsRepository(db);
  const streams = new EventStreams({
    events,
    seats,
    changes,
    // Revoked, or deleted (a child test key): its streams end.
    revoked: async (id) => {
      const key = await keys.get(id);
      return key === undefined || key.revokedAt !== null;
    },
    // A test key's card hears of a stream the service ended before the client sees its end (`resumes-streams`).
    ending: async (stream, by) => {
      const graded = stream.options.graded;
      if (!graded) return;
      const real = clock();
      const key = keyNow(await clocks.of(stream.options.owner), real);
      const { requestId, since } = graded;
      await cards.record(stream.options.owner, since, {
        kind: 'streamEnded',
        ended: { real, key, requestId, lastId: stream.lastId, retryMs: RETRY_MS, by },
      });
    },
    log: { warn },
    registry: metrics.registry,
  });
  // The signed cursors of collections.
  const cursors = new Cursors(await serviceSecret(db, 'cursors'));
  // A test key that starts over loses its script too.
  const testData = new TestData({
    db,
    changes,
    limiter,
    clocks,
    keys,
    alsoRemove: [(trx, id) => scripts.disarm(id, trx), (trx, id) => requestLog.clear(id, trx)],
  });
  // What a child test key's key is derived with (test-mode/test-keys.ts).
  const testKeySecret = await serviceSecret(db, 'test-keys');
  const webhooks = {
    endpoints: new EndpointsRepository(db),
    deliveries: new DeliveriesRepository(db),
    eventLog: new EventLog(db),
    writes,
    clock,
    policy: { allowPrivate: config.webhooks.allowPrivate },
    sending: config.webhooks,
  };
  const { publicUrl, petsGet: deprecation } = config;
  const { shapes } = versions;
  return {
    db,
    clock,
    publicUrl,
    limiter,
    cards,
    orderPages,
    pets,
    catalogue,
    clocks,
    keys,
    deprecation,
    shapes,
    writes,
    moves,
    placement,
    events,
    cursors,
    testData,
    testKeySecret,
    webhooks,
    scripts,
    requestLog,
    tokens: records.tokens,
    tokenTtlSeconds: config.oauth.tokenTtlMs / 1000,
    // A named scenario's steps, by its id.
    streams,
    seats,
    streamsPerKey: config.streamsPerKey,
    scenarioSteps: new Map(scenarios.scenarios.map((scenario) => [scenario.id, scenario])),
  };
}

/**
 * Every API operation needs a key and may answer the common problems; declared once, here. It is an API
 * operation to the stages (http/stages.ts: a key required, a version chosen and refused).
 */
export function declareCommonContract(route: RouteOptions): void {
  const config = { ...(route.config as RouteConfig), api: true };
  route.config = config;
  const schema = (route.schema ??= {}) as Record<string, unknown>;
  // The token endpoint takes client credentials (oauth/), and answers its own refusals in OAuth's shape.
  if (config.clientCredentials) {
    schema.security = [{ [CLIENT_SCHEME]: [] }];
    return;
  }
  // A key, or a token of the key holding the operation's scope (none: any token of the key).
  schema.security = [{ [SECURITY_SCHEME]: [] }, { [OAUTH_SCHEME]: config.scope === undefined ? [] : [config.scope] }];
  schema.querystring ??= NoQuery;
  const statuses = config.scope === undefined ? COMMON_PROBLEM_STATUSES : [...COMMON_PROBLEM_STATUSES, 403];
  schema.response = { ...problemResponses(...statuses), ...(schema.response as object) };
}
