import type { LightMyRequestResponse } from 'fastify';
import { buildPublicApp } from '../../src/app.js';
import type { PublicConfig } from '../../src/config.js';
import { loadConfig } from '../../src/config.js';
import { type ChangeFeed, openChangeFeed } from '../../src/db/change-feed.js';
import type { Db } from '../../src/db/database.js';
import type { App } from '../../src/http/types.js';
import { KeysRepository, type PlanChoice } from '../../src/keys/repository.js';
import { buildAdminApp } from '../../src/admin-app.js';
import { createLogger } from '../../src/ops/logger.js';
import { createMetrics, type Metrics } from '../../src/ops/metrics.js';
import { MemoryLimiterStore } from '../../src/ratelimit/memory-store.js';
import { transactionsOf } from '../../src/db/group-commit.js';
import { EventRetention } from '../../src/events/retention.js';
import { IdempotencyExpiry } from '../../src/idempotency/expiry.js';
import { Fulfilment } from '../../src/orders/fulfilment.js';
import { OrderMoves } from '../../src/orders/moves.js';
import { Dispatcher } from '../../src/webhooks/dispatcher.js';
import type { LimiterStore } from '../../src/ratelimit/store.js';
import { type FakeClock, fakeClock } from './clock.js';
import { TEST_STORE, type TestDatabase, testDatabase } from './database.js';
import { openDatabase } from '../../src/db/database.js';
import { overSocket, type Received, type Sent } from './over-socket.js';
import { restampKeys } from '../../src/ratelimit/callers.js';

export interface TestApp {
  app: App;
  /** The admin listener's app, sharing the store, limiter and metrics; `/admin/*` only with ADMIN_TOKEN in env. */
  admin: App;
  db: Db;
  /** What tells the app's caches of keys and pets that a row changed. */
  changes: ChangeFeed;
  /** DATABASE_URL for another process (the CLI) to share the store. */
  databaseUrl: string;
  /** The store, for another app to open after this one closed with `keepStore` (`store` in the options). */
  store: Pick<TestDatabase, 'url' | 'config' | 'drop'>;
  keys: KeysRepository;
  limiter: LimiterStore;
  metrics: Metrics;
  clock: FakeClock;
  config: PublicConfig;
  /** The instance's fulfilment, not started: a test moves the clock and calls `runDue()`. */
  fulfilment: Fulfilment;
  /** The instance's event retention, not started: a test calls `sweep()`. */
  retention: EventRetention;
  /** The instance's expiry of Idempotency-Key records, not started: a test calls `sweep()`. */
  idempotencyExpiry: IdempotencyExpiry;
  /** The instance's webhook dispatcher, not started: a test moves the clock and calls `runDue()`. */
  dispatcher: Dispatcher;
  /** Where the app listens (`overSocket`), e.g. `http://127.0.0.1:40123`; undefined when requests are injected. */
  url: string | undefined;
  /** Sends a request: injected into Fastify, or over a real socket (`overSocket`). */
  request(sent: Sent): Promise<Received>;
  /** A new key of the plan; returns the full key. */
  newKey(choice?: (PlanChoice & { test?: boolean; apiVersion?: string }) | PlanChoice['plan']): Promise<string>;
  /** Stops everything; the store is dropped unless `keepStore` (another app opens it next). */
  close(options?: { keepStore?: boolean }): Promise<void>;
}

export interface TestAppOptions {
  env?: Record<string, string>;
  clock?: FakeClock;
  limiter?: LimiterStore;
  /** A SQLite file shared with other processes; default: a fresh store of the suite's kind (TEST_STORE). */
  sqliteFile?: string;
  /** Reach PostgreSQL through this URL (a proxy) instead of TEST_DATABASE_URL. */
  postgresVia?: string;
  /** Receives the app's JSON log lines; default: no logging. */
  logLines?: string[];
  /** In [0, 1): the webhook retries' jitter (default Math.random). */
  random?: () => number;
  /** The store of an app closed with `keepStore` (a restart): opened again, and dropped when this app closes. */
  store?: Pick<TestDatabase, 'url' | 'config' | 'drop'>;
  /** The app listens on 127.0.0.1 and `request` goes over a real socket, as a client's would. */
  overSocket?: boolean;
}

/**
 * The public and admin apps over a fresh store of the suite's kind (in-memory SQLite, or a PostgreSQL
 * schema of their own), a memory limiter and a fake clock.
 */
export async function testApp(options: TestAppOptions = {}): Promise<TestApp> {
  const clock = options.clock ?? fakeClock();
  const config = loadConfig({ PUBLIC_URL: 'http://petstore.test', ...options.env });
  const { adminToken } = config;
  const kind = options.sqliteFile ? 'sqlite' : options.postgresVia ? 'postgres' : TEST_STORE;
  const store = options.store
    ? reopened(options.store)
    : await testDatabase({ kind, sqliteFile: options.sqliteFile, connectVia: options.postgresVia });
  const { db } = store;
  const limiter = options.limiter ?? new MemoryLimiterStore({ clock, rules: config.ban });
  const metrics = createMetrics();
  const logger = options.logLines ? capturingLogger(options.logLines, adminToken) : false;
  const changes = openChangeFeed(db, store.config, { clock });
  const app = await buildPublicApp({ config, db, changes, limiter, metrics, clock, logger });
  const limiterStatus = () => ({ configured: 'memory', deciding: 'memory' }) as const;
  const admin = await buildAdminApp({
    db,
    changes,
    limiter,
    limiterStatus,
    metrics,
    clock,
    publicUrl: config.publicUrl,
    adminToken,
    logger,
  });
  const keys = new KeysRepository(db, clock, changes);
  // The jobs log where the app does: nowhere, or into `logLines`.
  const quiet = logger || { warn: () => {}, info: () => {} };
  const moves = OrderMoves.of(db, config.fulfilment, changes, metrics, restampKeys(limiter, changes));
  const fulfilment = new Fulfilment({
    moves,
    transactions: transactionsOf(db),
    clock,
    lag: metrics.fulfilmentLag,
    log: quiet,
  });
  const retention = new EventRetention({ db, clock, retentionMs: config.eventsRetentionMs, log: quiet });
  const idempotencyExpiry = new IdempotencyExpiry({ db, clock, log: quiet });
  const dispatcher = Dispatcher.of(db, config.webhooks, { clock, metrics, log: quiet, random: options.random });
  const url = options.overSocket ? await app.listen({ host: '127.0.0.1', port: 0 }) : undefined;
  const request = url ? overSocket(Number(new URL(url).port)) : injected(app);
  return {
    app,
    admin,
    db,
    changes,
    databaseUrl: store.url,
    store: { url: store.url, config: store.config, drop: store.drop },
    keys,
    limiter,
    metrics,
    clock,
    config,
    fulfilment,
    retention,
    idempotencyExpiry,
    dispatcher,
    url,
    request,
    newKey: async (choice = 'pro') => (await keys.create(typeof choice === 'string' ? { plan: choice } : choice)).key,
    close: async ({ keepStore = false } = {}) => {
      await Promise.all([fulfilment.stop(), retention.stop(), idempotencyExpiry.stop(), dispatcher.stop()]);
      await app.close();
      await admin.close();
      await limiter.close();
      await changes.close();
      await db.destroy();
      if (!keepStore) await store.drop();
    },
  };
}

function injected(app: App) {
  return async (sent: Sent): Promise<Received> => {
    const { remoteAddress, ...rest } = sent;
    const response = await app.inject({ ...rest, ...(remoteAddress ? { remoteAddress } : {}) });
    return {
      statusCode: response.statusCode,
      headers: response.headers,
      body: response.body,
      json: () => response.json(),
    };
  };
}

/** The same store again, as a restarted instance opens it. */
function reopened({ url, config, drop }: Pick<TestDatabase, 'url' | 'config' | 'drop'>): TestDatabase {
  return { db: openDatabase(config), url, config, drop };
}

// A test reads whatever a body holds; the assertions check it.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function json<T = any>(response: Pick<LightMyRequestResponse, 'body'>): T {
  return JSON.parse(response.body) as T;
}

/** The service's own logger (its serializers and redaction, the admin token as a secret), writing into `lines`. */
function capturingLogger(lines: string[], adminToken: string | null) {
  return createLogger('info', { write: (line: string) => void lines.push(line) }, adminToken ? [adminToken] : []);
}
