import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { isStoreUnavailable } from './db/errors.js';
import Fastify, { type FastifyBaseLogger } from 'fastify';
import type { Clock } from './clock.js';
import type { ChangeFeed } from './db/change-feed.js';
import { type Db, ping } from './db/database.js';
import { errorHandler, frameworkErrorHandler, httpChecksStage, notFoundHandler } from './http/errors.js';
import { MAX_HEAD_BYTES } from './http/limits.js';
import { requestIdOf, requestIdStage } from './http/request-id.js';
import { pipeline, planOf } from './http/stages.js';
import type { App } from './http/types.js';
import { validatorCompiler } from './http/validation.js';
import { adminKeyRoutes } from './keys/admin-routes.js';
import { KeysRepository } from './keys/repository.js';
import type { LimiterStatus } from './ratelimit/open.js';
import type { LimiterStore } from './ratelimit/store.js';
import type { Metrics } from './ops/metrics.js';

/** The admin listener's stages: every answer says its request id, and HTTP's own requirements are checked. */
const ADMIN_STAGES = [requestIdStage, httpChecksStage];

export interface AdminAppDeps {
  db: Db;
  /** Told of every key this listener changes, so that this instance's key cache applies it at once. */
  changes: ChangeFeed;
  limiter: LimiterStore;
  limiterStatus: () => LimiterStatus;
  metrics: Metrics;
  clock: Clock;
  publicUrl: string;
  /** Null: `/admin/*` does not exist. */
  adminToken: string | null;
  logger: FastifyBaseLogger | false;
}

/**
 * The admin listener: health, readiness, metrics and, with a token, the admin API. Never public. Wiring, as
 * ./app.ts is for the public listener: its stages and its routes are listed here.
 */
export async function buildAdminApp({
  db,
  changes,
  limiter,
  limiterStatus,
  metrics,
  clock,
  publicUrl,
  adminToken,
  logger,
}: AdminAppDeps): Promise<App> {
  const app = Fastify({
    loggerInstance: logger || undefined,
    logger: logger ? undefined : false,
    genReqId: requestIdOf,
    routerOptions: { maxParamLength: MAX_HEAD_BYTES },
    // A URL Fastify cannot route gets a problem here too, not Fastify's own JSON.
    frameworkErrors: frameworkErrorHandler(publicUrl, planOf(ADMIN_STAGES, {}).onRequest, isStoreUnavailable),
    http: { maxHeaderSize: MAX_HEAD_BYTES, requireHostHeader: false },
  }).withTypeProvider<TypeBoxTypeProvider>();
  app.setValidatorCompiler(validatorCompiler([]));
  app.setErrorHandler(errorHandler(publicUrl, isStoreUnavailable));
  app.setNotFoundHandler(notFoundHandler(publicUrl));
  pipeline(app, ADMIN_STAGES);

  app.get('/healthz', async () => ({ status: 'ok' }));
  // Ready while the database answers. A Redis outage does not make an instance unready: it limits
  // in memory meanwhile, and says so here.
  app.get('/readyz', async (_request, reply) => {
    const database = await ping(db);
    const limiter = limiterStatus();
    return reply
      .code(database ? 200 : 503)
      .send({ status: database ? 'ready' : 'unavailable', checks: { database }, limiter });
  });
  app.get('/metrics', async (_request, reply) =>
    reply.type(metrics.registry.contentType).send(await metrics.registry.metrics()),
  );

  if (adminToken) {
    await app.register(async (admin: App) =>
      adminKeyRoutes(admin, { keys: new KeysRepository(db, clock, changes), limiter, token: adminToken }),
    );
  }
  await app.ready();
  return app;
}
