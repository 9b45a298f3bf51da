import type { LightMyRequestResponse } from 'fastify';
import pino from 'pino';
import { buildPublicApp, type PublicConfig } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { openDatabase, type Db } from '../../src/db/database.js';
import { migrate } from '../../src/db/migrations.js';
import type { App } from '../../src/http/types.js';
import { KeysRepository, type PlanChoice } from '../../src/keys/repository.js';
import { buildAdminApp } from '../../src/ops/app.js';
import { createMetrics, type Metrics } from '../../src/ops/metrics.js';
import { MemoryLimiterStore } from '../../src/ratelimit/memory-store.js';
import type { LimiterStore } from '../../src/ratelimit/store.js';
import { fakeClock, type FakeClock } from './clock.js';

export interface TestApp {
  app: App;
  /** The admin listener's app, sharing the store, limiter and metrics; `/admin/*` only with ADMIN_TOKEN in env. */
  admin: App;
  db: Db;
  keys: KeysRepository;
  limiter: LimiterStore;
  metrics: Metrics;
  clock: FakeClock;
  config: PublicConfig;
  /** A new key of the plan; returns the full key. */
  newKey(choice?: PlanChoice | PlanChoice['plan']): Promise<string>;
  close(): Promise<void>;
}

/** The public app over a fresh in-memory SQLite store and memory limiter, with a fake clock. */
export interface TestAppOptions {
  env?: Record<string, string>;
  clock?: FakeClock;
  limiter?: LimiterStore;
  /** A SQLite file shared with other processes (the CLI); default: a private in-memory store. */
  sqliteFile?: string;
  /** Receives the app's JSON log lines; default: no logging. */
  logLines?: string[];
}

export async function testApp(options: TestAppOptions = {}): Promise<TestApp> {
  const clock = options.clock ?? fakeClock();
  const config = loadConfig({ PUBLIC_URL: 'http://petstore.test', ...options.env });
  const { adminToken } = config;
  const db = openDatabase({ kind: 'sqlite', file: options.sqliteFile ?? ':memory:' });
  await migrate(db, 'sqlite');
  const limiter = options.limiter ?? new MemoryLimiterStore({ clock, rules: config.ban });
  const metrics = createMetrics();
  const logger = options.logLines ? capturingLogger(options.logLines) : false;
  const app = await buildPublicApp({ config, db, limiter, metrics, clock, logger });
  const admin = await buildAdminApp({ db, limiter, metrics, clock, publicUrl: config.publicUrl, adminToken, logger: false });
  const keys = new KeysRepository(db, clock);
  return {
    app,
    admin,
    db,
    keys,
    limiter,
    metrics,
    clock,
    config,
    newKey: async (choice = 'pro') => (await keys.create(typeof choice === 'string' ? { plan: choice } : choice)).key,
    close: async () => {
      await app.close();
      await admin.close();
      await limiter.close();
      await db.destroy();
    },
  };
}

export function json<T = any>(response: LightMyRequestResponse): T {
  return JSON.parse(response.body) as T;
}

function capturingLogger(lines: string[]) {
  return pino({ level: 'info' }, { write: (line: string) => void lines.push(line) });
}
