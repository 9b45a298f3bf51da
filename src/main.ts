import { buildPublicApp } from './app.js';
import { systemClock } from './clock.js';
import { type Config, ConfigError, loadConfig } from './config.js';
import { type ChangeFeed, openChangeFeed } from './db/change-feed.js';
import { checkpointInBackground } from './db/checkpointer.js';
import { type Db, openDatabase, warmUp } from './db/database.js';
import { migrate } from './db/migrations.js';
import { transactionsOf } from './db/group-commit.js';
import { EventRetention } from './events/retention.js';
import { IdempotencyExpiry } from './idempotency/expiry.js';
import { createDemoKeys } from './keys/demo.js';
import { Fulfilment } from './orders/fulfilment.js';
import { OrderMoves } from './orders/moves.js';
import { Dispatcher } from './webhooks/dispatcher.js';
import { KeysRepository } from './keys/repository.js';
import { buildAdminApp } from './admin-app.js';
import { createLogger, logFormatFor, stdout } from './ops/logger.js';
import { createMetrics, type Metrics } from './ops/metrics.js';
import { openLimiter } from './ratelimit/open.js';
import { openCards } from './report-card/open.js';
import { openSeats } from './event-stream/open.js';
import { restampKeys } from './ratelimit/callers.js';
import type { LimiterStore } from './ratelimit/store.js';
import type { Logger } from 'pino';
import { tuneV8 } from './ops/v8-flags.js';

/** How long a drain keeps listening before closing idle connections (see `stop`). */
const DRAIN_GRACE_MS = 250;
/**
 * How long the service waits, at start, for the change feed to listen before it answers anyway. A key
 * read before the feed listens is trusted for a second only, then read again (db/change-feed.ts): a
 * service that answers first pays one extra read per key it met in its first moments.
 */
const FEED_WAIT_MS = 2_000;

/** Reads the configuration, opens the stores, starts both listeners and stops cleanly on a signal. */
async function main(config: Config): Promise<void> {
  tuneV8();
  const logFormat = logFormatFor(config.logFormat, Boolean(process.stdout.isTTY));
  const logger = createLogger(config.logLevel, stdout(logFormat), config.adminToken ? [config.adminToken] : []);
  const clock = systemClock;
  const { db, checkpoints, changes } = await openStores(config, logger);

  const keys = new KeysRepository(db, clock, changes);
  if (config.demoKeys && config.database.kind === 'sqlite' && (await keys.count()) === 0) {
    process.stdout.write(`${await createDemoKeys(keys, config.publicUrl)}\n`);
  }

  const metrics = createMetrics({ eventLoopResolutionMs: config.eventLoopResolutionMs });
  const { store: limiter, status: limiterStatus } = await openLimiter(config, clock, logger, (status) => {
    for (const store of ['redis', 'memory'] as const)
      metrics.limiterStore.set({ store }, status.deciding === store ? 1 : 0);
  });
  const cards = await openCards(config, clock, logger);
  const seats = await openSeats(config, clock);
  const publicApp = await buildPublicApp({ config, db, changes, limiter, metrics, clock, logger, cards, seats });
  const { publicUrl, adminToken } = config;
  const adminApp = await buildAdminApp({
    db,
    changes,
    limiter,
    limiterStatus,
    metrics,
    clock,
    publicUrl,
    adminToken,
    logger,
  });
  const jobs = backgroundJobs(config, db, changes, metrics, limiter, logger);
  await within(changes.ready(), FEED_WAIT_MS);
  await publicApp.listen({ host: config.host, port: config.port });
  await adminApp.listen({ host: config.adminHost, port: config.adminPort });
  jobs.start();
  if (!config.adminToken) logger.info('ADMIN_TOKEN is not set: the admin API (/admin/*) is off');

  const stop = stopper(config, logger, publicApp, async () => {
    await Promise.all([publicApp.close(), adminApp.close(), jobs.stop()]);
    // Each has a Redis connection of its own (scaled out): closed together.
    await Promise.all([limiter.close(), cards.close(), seats.close()]);
    await changes.close();
    await checkpoints?.close();
    await db.destroy();
  });
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}

/** The store, migrated, its checkpoints (SQLite) and its change feed. */
async function openStores(config: Config, logger: Logger) {
  const db = openDatabase(config.database);
  await migrate(db, config.database.kind);
  if (config.database.kind === 'postgres') await warmUp(db);
  const checkpoints = config.database.kind === 'sqlite' ? checkpointInBackground(db, { log: logger }) : null;
  const changes = openChangeFeed(db, config.database, { clock: systemClock, log: logger });
  return { db, checkpoints, changes };
}

/**
 * Off the request path: orders falling due move, webhooks go out, and
 * events past their retention and Idempotency-Keys past their window go.
 */
function backgroundJobs(
  config: Config,
  db: Db,
  changes: ChangeFeed,
  metrics: Metrics,
  limiter: LimiterStore,
  logger: Logger,
) {
  const log = logger.child({ component: 'jobs' });
  const clock = systemClock;
  const moves = OrderMoves.of(db, config.fulfilment, changes, metrics, restampKeys(limiter, changes));
  const fulfilment = new Fulfilment({
    moves,
    transactions: transactionsOf(db),
    clock,
    lag: metrics.fulfilmentLag,
    log,
  });
  const retention = new EventRetention({ db, clock, retentionMs: config.eventsRetentionMs, log });
  const expiry = new IdempotencyExpiry({ db, clock, log });
  const dispatcher = Dispatcher.of(db, config.webhooks, { clock, metrics, log });
  return {
    /** Once the API answers; not awaited: a flood of orders that fell due while no instance ran is paced. */
    start(): void {
      void fulfilment.start();
      void retention.start();
      void expiry.start();
      dispatcher.start();
    },
    stop: () => Promise.all([fulfilment.stop(), retention.stop(), expiry.stop(), dispatcher.stop()]),
  };
}

/** Drains the public listener, then closes everything (`close`) and exits; once, whatever signals follow. */
function stopper(config: Config, logger: Logger, publicApp: { draining: boolean }, close: () => Promise<void>) {
  let stopping = false;
  return async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'stopping: finishing requests in flight');
    // A drain that hangs must not keep the process alive forever.
    setTimeout(() => {
      logger.error('drain timeout passed; exiting');
      process.exit(1);
    }, config.shutdownTimeoutMs).unref();
    publicApp.draining = true;
    // close() cuts the connections that look idle; a request may be on its way on one of them. A
    // moment to read it lets it be answered (with Connection: close) instead of reset.
    await new Promise((resolve) => setTimeout(resolve, DRAIN_GRACE_MS));
    await close();
    logger.info('stopped');
    logger.flush(() => process.exit(0));
  };
}

/** `promise`, or nothing once `ms` have passed. */
async function within(promise: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([promise, new Promise((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}

let config: Config;
try {
  config = loadConfig();
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  process.stderr.write(`petstore: bad configuration: ${error.message}\n`);
  process.exit(2);
}
main(config).catch((error: unknown) => {
  process.stderr.write(`petstore: could not start: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
