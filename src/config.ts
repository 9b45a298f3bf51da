import type { DatabaseConfig } from './db/database.js';
import type { Timeouts } from './http/server.js';
import type { LogFormat } from './ops/logger.js';
import { DEFAULT_EVENT_LOOP_RESOLUTION_MS } from './ops/metrics.js';
import type { FulfilmentDelays } from './orders/lifecycle.js';
import type { BanRules } from './ratelimit/decision.js';
import type { RedisConfig } from './ratelimit/failover-store.js';
import { webhookConfigOf } from './config-webhooks.js';
import {
  booleanOf,
  ConfigError,
  delayOf,
  type Env,
  httpUrlOf,
  instantOf,
  portOf,
  positiveIntOf,
  wholeUpToOf,
} from './config-values.js';
import { DAY_MS } from './ratelimit/state.js';
import { banRulesOf, redisKeyPrefixOf, redisOf } from './config-limiter.js';
import type { WebhookConfig } from './webhooks/dispatcher.js';

export { ConfigError } from './config-values.js';

/**
 * Every environment variable the service reads, validated once. A bad value stops start-up with one
 * line that names the variable and what is wrong with it (see `ConfigError`).
 */
export interface Config {
  host: string;
  port: number;
  adminHost: string;
  adminPort: number;
  /** Unset: the admin API (`/admin/*`) is switched off. */
  adminToken: string | null;
  database: DatabaseConfig;
  /**
   * Where the limiter keeps its state: one Redis (REDIS_URL), a Redis Cluster (REDIS_CLUSTER_NODES), or none (memory).
   */
  redis: RedisConfig | null;
  /** Starts every limiter key in Redis, so that several services can share one Redis. */
  redisKeyPrefix: string;
  publicUrl: string;
  production: boolean;
  demoKeys: boolean;
  logLevel: string;
  /**
   * `pretty`: lines for people (pino-pretty); `json`: one JSON
   * object a line; `auto` (unset): pretty when stdout is a terminal.
   */
  logFormat: LogFormat;
  /** Proxy addresses whose `X-Forwarded-For` is believed (Fastify's `trustProxy`); false: none. */
  trustProxy: false | string[];
  bodyLimit: number;
  petsGet: { deprecatedAt: Date; sunsetAt: Date };
  /** When the oldest version stops answering (versions/): OLDEST_VERSION_SUNSET_AT. */
  oldestVersionSunsetAt: Date;
  ban: BanRules;
  shutdownTimeoutMs: number;
  timeouts: Timeouts;
  /** How many keys and pets each instance holds in memory at most (the least recently used leave first). */
  cache: { keys: number; pets: number; orderPages: number };
  /** The tick of the event-loop delay metrics, in ms (prom-client's `eventLoopMonitoringPrecision`). */
  eventLoopResolutionMs: number;
  /** How orders move by themselves (orders/lifecycle.ts): null for a move that never happens by itself. */
  fulfilment: FulfilmentDelays;
  /** How long events (and, with webhooks, their delivery logs) are kept. */
  eventsRetentionMs: number;
  webhooks: WebhookConfig;
  /** Access tokens (oauth/): their lifetime (OAUTH_TOKEN_TTL_SECONDS) and how often their signing key rotates. */
  oauth: { tokenTtlMs: number; rotationMs: number };
  /** Exchanges kept per test key in its request log (request-log/): REQUEST_LOG_PER_KEY; 0, none recorded. */
  requestLogPerKey: number;
  /** Event streams a key may hold open at once, across instances (event-stream/): STREAMS_PER_KEY. */
  streamsPerKey: number;
}

export const DEFAULTS = {
  port: 8080,
  adminPort: 8081,
  sqliteFile: './data/petstore.db',
  petsGetDeprecatedAt: '2026-01-01T00:00:00Z',
  petsGetSunsetAt: '2027-07-01T00:00:00Z',
  oldestVersionSunsetAt: '2027-07-01T00:00:00Z',
  bodyLimit: 16 * 1024,
  shutdownTimeoutMs: 10_000,
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  // Longer than the 60 s idle timeout of common load balancers, so that they close first, never the service mid-reuse.
  keepAliveTimeoutMs: 72_000,
  sendTimeoutMs: 30_000,
  connectionsPerAddress: 256,
  bannedReadPauseMs: 100,
  keyCacheSize: 100_000,
  petCacheSize: 10_000,
  orderPageCacheSize: 5_000,
  eventLoopResolutionMs: DEFAULT_EVENT_LOOP_RESOLUTION_MS,
  // Short enough that a person trying the API sees an order move.
  fulfilmentApproveSeconds: 10,
  fulfilmentDeliverSeconds: 60,
  eventsRetentionDays: 30,
  oauthTokenTtlSeconds: 3600,
  oauthKeyRotationDays: 30,
  requestLogPerKey: 1000,
  streamsPerKey: 5,
} as const;

export function loadConfig(env: Env = process.env): Config {
  const port = portOf(env, 'PORT', DEFAULTS.port);
  const deprecatedAt = instantOf(env, 'PETS_GET_DEPRECATED_AT', DEFAULTS.petsGetDeprecatedAt);
  const sunsetAt = instantOf(env, 'PETS_GET_SUNSET_AT', DEFAULTS.petsGetSunsetAt);
  if (sunsetAt < deprecatedAt) {
    throw new ConfigError('PETS_GET_SUNSET_AT', 'the sunset may not precede PETS_GET_DEPRECATED_AT');
  }
  const production = env.NODE_ENV === 'production';
  return {
    host: env.HOST || '0.0.0.0',
    port,
    adminHost: env.ADMIN_HOST || '127.0.0.1',
    adminPort: portOf(env, 'ADMIN_PORT', DEFAULTS.adminPort),
    adminToken: adminTokenOf(env),
    database: databaseOf(env),
    redis: redisOf(env),
    redisKeyPrefix: redisKeyPrefixOf(env),
    publicUrl: httpUrlOf(env, 'PUBLIC_URL', `http://localhost:${port}`),
    production,
    demoKeys: !production && booleanOf(env, 'DEMO_KEYS', true),
    logLevel: logLevelOf(env),
    logFormat: logFormatOf(env),
    trustProxy: trustProxyOf(env),
    bodyLimit: positiveIntOf(env, 'BODY_LIMIT', DEFAULTS.bodyLimit),
    petsGet: { deprecatedAt, sunsetAt },
    oldestVersionSunsetAt: instantOf(env, 'OLDEST_VERSION_SUNSET_AT', DEFAULTS.oldestVersionSunsetAt),
    ban: banRulesOf(env),
    shutdownTimeoutMs: 1000 * positiveIntOf(env, 'SHUTDOWN_TIMEOUT_SECONDS', DEFAULTS.shutdownTimeoutMs / 1000),
    timeouts: timeoutsOf(env),
    cache: {
      keys: positiveIntOf(env, 'KEY_CACHE_SIZE', DEFAULTS.keyCacheSize),
      pets: positiveIntOf(env, 'PET_CACHE_SIZE', DEFAULTS.petCacheSize),
      orderPages: positiveIntOf(env, 'ORDER_PAGE_CACHE_SIZE', DEFAULTS.orderPageCacheSize),
    },
    eventLoopResolutionMs: positiveIntOf(env, 'EVENT_LOOP_RESOLUTION_MS', DEFAULTS.eventLoopResolutionMs),
    fulfilment: {
      approveMs: delayOf(env, 'FULFILMENT_APPROVE_SECONDS', DEFAULTS.fulfilmentApproveSeconds),
      deliverMs: delayOf(env, 'FULFILMENT_DELIVER_SECONDS', DEFAULTS.fulfilmentDeliverSeconds),
    },
    eventsRetentionMs: DAY_MS * positiveIntOf(env, 'EVENTS_RETENTION_DAYS', DEFAULTS.eventsRetentionDays),
    webhooks: webhookConfigOf(env, production),
    oauth: {
      tokenTtlMs: 1000 * positiveIntOf(env, 'OAUTH_TOKEN_TTL_SECONDS', DEFAULTS.oauthTokenTtlSeconds),
      rotationMs: DAY_MS * positiveIntOf(env, 'OAUTH_KEY_ROTATION_DAYS', DEFAULTS.oauthKeyRotationDays),
    },
    requestLogPerKey: wholeUpToOf(env, 'REQUEST_LOG_PER_KEY', DEFAULTS.requestLogPerKey, 10_000),
    streamsPerKey: positiveIntOf(env, 'STREAMS_PER_KEY', DEFAULTS.streamsPerKey),
  };
}

function timeoutsOf(env: Env): Timeouts {
  const headersMs = 1000 * positiveIntOf(env, 'HEADERS_TIMEOUT_SECONDS', DEFAULTS.headersTimeoutMs / 1000);
  const requestMs = 1000 * positiveIntOf(env, 'REQUEST_TIMEOUT_SECONDS', DEFAULTS.requestTimeoutMs / 1000);
  // The headers are part of the request: Node refuses a headers timeout longer than the request's.
  if (headersMs > requestMs) throw new ConfigError('HEADERS_TIMEOUT_SECONDS', 'may not exceed REQUEST_TIMEOUT_SECONDS');
  const keepAliveMs = 1000 * positiveIntOf(env, 'KEEP_ALIVE_TIMEOUT_SECONDS', DEFAULTS.keepAliveTimeoutMs / 1000);
  const sendMs = 1000 * positiveIntOf(env, 'SEND_TIMEOUT_SECONDS', DEFAULTS.sendTimeoutMs / 1000);
  const connectionsPerAddress = positiveIntOf(env, 'MAX_CONNECTIONS_PER_ADDRESS', DEFAULTS.connectionsPerAddress);
  // Longer, and a banned client's next answer would look like a hang.
  const bannedReadPauseMs = wholeUpToOf(env, 'BANNED_READ_PAUSE_MS', DEFAULTS.bannedReadPauseMs, 1_000);
  return { headersMs, requestMs, keepAliveMs, sendMs, connectionsPerAddress, bannedReadPauseMs };
}

function adminTokenOf(env: Env): string | null {
  const token = env.ADMIN_TOKEN;
  if (token === undefined || token === '') return null;
  // The token guards every key; a short one is guessable. Its value never appears in the message.
  if (token.length < 16) throw new ConfigError('ADMIN_TOKEN', 'must be at least 16 characters long');
  return token;
}

function databaseOf(env: Env): DatabaseConfig {
  const raw = env.DATABASE_URL;
  if (raw === undefined || raw === '') return { kind: 'sqlite', file: DEFAULTS.sqliteFile };
  if (/^postgres(ql)?:\/\//.test(raw)) return { kind: 'postgres', url: raw };
  if (raw.startsWith('file:')) return { kind: 'sqlite', file: raw.slice('file:'.length).replace(/^\/\/(?=\/)/, '') };
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(raw)) {
    throw new ConfigError(
      'DATABASE_URL',
      'expected postgres://…, file:… or a path to a SQLite file; that scheme is not supported',
    );
  }
  return { kind: 'sqlite', file: raw };
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

function logLevelOf(env: Env): string {
  const raw = env.LOG_LEVEL || 'info';
  if (!LOG_LEVELS.includes(raw)) throw new ConfigError('LOG_LEVEL', `expected one of ${LOG_LEVELS.join(', ')}`);
  return raw;
}

const LOG_FORMATS: readonly LogFormat[] = ['auto', 'json', 'pretty'];

function logFormatOf(env: Env): LogFormat {
  const raw = env.LOG_FORMAT || 'auto';
  if (!(LOG_FORMATS as readonly string[]).includes(raw))
    throw new ConfigError('LOG_FORMAT', `expected one of ${LOG_FORMATS.join(', ')}`);
  return raw as LogFormat;
}

function trustProxyOf(env: Env): false | string[] {
  const raw = env.TRUST_PROXY;
  if (raw === undefined || raw === '' || raw === 'false') return false;
  const entries = raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const address = /^[0-9a-f:.]+(\/\d{1,3})?$/i;
  const bad = entries.find((e) => !address.test(e));
  if (bad !== undefined || entries.length === 0) {
    throw new ConfigError(
      'TRUST_PROXY',
      `expected a comma-separated list of proxy addresses or CIDR ranges, got "${raw}"`,
    );
  }
  return entries;
}

/** What the public listener reads of the configuration. */
export type PublicConfig = Pick<
  Config,
  | 'publicUrl'
  | 'bodyLimit'
  | 'trustProxy'
  | 'petsGet'
  | 'oldestVersionSunsetAt'
  | 'timeouts'
  | 'cache'
  | 'ban'
  | 'fulfilment'
  | 'webhooks'
  | 'oauth'
  | 'requestLogPerKey'
  | 'streamsPerKey'
>;
