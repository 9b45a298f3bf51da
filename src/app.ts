import swagger from '@fastify/swagger';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyBaseLogger, type FastifyServerOptions, LogController } from 'fastify';
import { recordsOf, type ServiceDeps } from './api-operations.js';
import type { PublicConfig } from './config.js';
import type { ChangeFeed } from './db/change-feed.js';
import { isEmbedded } from './db/database.js';
import { isStoreUnavailable } from './db/errors.js';
import { problemPages } from './docs/problem-pages.js';
import { docsRoutes } from './docs/routes.js';
import { FaultDraws } from './faults/draws.js';
import { clientErrorHandler } from './http/client-errors.js';
import { errorHandler, frameworkErrorHandler, notFoundHandler } from './http/errors.js';
import { Connections } from './http/in-flight.js';
import { MAX_HEAD_BYTES } from './http/limits.js';
import { collectRoutes, registerMethodNotAllowed, routeEveryMethod } from './http/method-not-allowed.js';
import { requestIdOf } from './http/request-id.js';
import { sharedSerializers } from './http/serialization.js';
import { publicServer } from './http/server.js';
import { pipeline, planOf, type RouteConfig, type Stage } from './http/stages.js';
import type { App } from './http/types.js';
import { validatorCompiler } from './http/validation.js';
import { swaggerOptions } from './openapi/document.js';
import { NAMED_SCHEMAS } from './document-schemas.js';
import { openapiRoutes } from './openapi/routes.js';
import { wellKnownRoutes } from './oauth/well-known.js';
import { lazyChildLogger } from './ops/logger.js';
import { apiOperations } from './operations.js';
import { unreadAnswerHeaders } from './ratelimit/stage.js';
import { type Cards, MemoryCards } from './report-card/cards.js';
import { checkPages } from './report-card/pages.js';
import { scenarioCatalogue } from './scenarios/catalogue.js';
import { catalogueRoutes } from './scenarios/catalogue-routes.js';
import type { ScenarioCatalogue } from './scenarios/schemas.js';
import { stepsAhead } from './scenarios/steps.js';
import { requestStages } from './stages.js';
import { MemoryRequestLog } from './request-log/log.js';
import { MemorySeats, type StreamSeats } from './event-stream/seats.js';
import { StoreRequestLog } from './request-log/store.js';
import { versionsRoutes } from './versions/routes.js';
import { type Versioning, versioning } from './versions/versioning.js';
import { NEWEST_VERSION, VERSION_HEADER } from './versions/versions.js';

/**
 * An answer given before a request could be read (malformed, a CONNECT, an address
 * refused) is shaped as a request without a key is: in the newest version.
 */
const UNREAD_ANSWER_HEADERS = { [VERSION_HEADER]: NEWEST_VERSION };

declare module 'fastify' {
  interface FastifyInstance {
    /** Set on SIGTERM (main.ts): from then on every answer closes its connection once sent (http/server.ts). */
    draining: boolean;
  }
}

export interface PublicAppDeps extends ServiceDeps {
  logger: FastifyBaseLogger | false;
  /** Test keys' report cards (report-card/): in this process's memory unless given (Redis, scaled out). */
  cards?: Cards;
  /** Each key's open event streams (event-stream/): counted in this process's memory unless given (Redis). */
  seats?: StreamSeats;
}

/**
 * The public listener's app, built without listening. Every request goes through the same stages, in
 * the order of src/stages.ts (who is calling, the report card, faults, the limit with its headers on every
 * answer, …), then, for an API operation, the route's own validation and handler.
 */
export async function buildPublicApp(deps: PublicAppDeps): Promise<App> {
  const { config, db, changes, limiter, metrics, clock, logger, cards = new MemoryCards() } = deps;
  const { seats = new MemorySeats() } = deps;
  const { publicUrl } = config;
  const records = recordsOf({ config, db, changes, limiter, clock });
  const { keyCache, clocks, scripts, tokens } = records;
  const scenarios = scenarioCatalogue(publicUrl, config.petsGet.sunsetAt);
  const connections = new Connections(clock);
  const warn = (fields: object, message: string) => (logger || undefined)?.warn(fields, message);
  // As the cards: in memory on the embedded store (one process answers every request), else in the store.
  const requestLog = isEmbedded(db)
    ? new MemoryRequestLog(config.requestLogPerKey)
    : new StoreRequestLog(db, warn, config.requestLogPerKey);
  const versions = versioning({ clock, publicUrl, oldestSunsetAt: config.oldestVersionSunsetAt, named: NAMED_SCHEMAS });
  const stages = requestStages({
    config,
    limiter,
    metrics,
    clock,
    findKey: keyCache.find.bind(keyCache),
    clockOf: clocks.of.bind(clocks),
    bearers: { check: tokens.check, findKeyById: keyCache.findById.bind(keyCache) },
    cards,
    requestLog,
    versions,
    draws: new FaultDraws(),
    steps: stepsAhead(scripts, clock),
    connections,
    logger,
    draining: () => app.draining,
  });
  const app: App = Fastify(fastifyOptions(deps, stages, connections)).withTypeProvider<TypeBoxTypeProvider>();
  app.decorate('draining', false);
  app.addHook('onClose', () => requestLog.close());
  pipeline(app, stages);
  everyRoute(app, publicUrl);

  await app.register(swagger, swaggerOptions(publicUrl, config.ban));
  routeEveryMethod(app);
  const routes = collectRoutes(app);
  await app.register(async (api: App) =>
    apiOperations(api, {
      config,
      db,
      changes,
      limiter,
      metrics,
      clock,
      versions,
      records,
      cards,
      scenarios,
      requestLog,
      seats,
      warn,
    }),
  );
  documentation(app, config, versions, scenarios);
  wellKnownRoutes(app, { publicUrl, keys: records.signingKeys });
  registerMethodNotAllowed(app, routes);
  await app.ready();
  return app;
}

/**
 * Fastify's options for the public listener: its server (http/server.ts),
 * its logger, its limits, and how it answers what never reaches a route.
 */
function fastifyOptions(
  { config, changes, limiter, metrics, clock, logger }: PublicAppDeps,
  stages: readonly Stage[],
  connections: Connections,
): FastifyServerOptions {
  const { publicUrl } = config;
  const unread = unreadAnswerHeaders(limiter, UNREAD_ANSWER_HEADERS);
  const closed = (reason: string) => metrics.connectionsClosed.inc({ reason });
  return {
    serverFactory: publicServer({
      config,
      logger,
      clock,
      headersOf: unread,
      closed,
      lookOnce: lookOnceOf(changes),
      connections,
    }),
    loggerInstance: logger || undefined,
    logger: logger ? undefined : false,
    genReqId: requestIdOf,
    // One access line a request, when answered (ops/access-log.ts), instead of Fastify's two.
    logController: new LogController({ disableRequestLogging: true }),
    childLoggerFactory: lazyChildLogger,
    bodyLimit: config.bodyLimit,
    routerOptions: { maxParamLength: MAX_HEAD_BYTES },
    trustProxy: config.trustProxy,
    return503OnClosing: true,
    // A URL Fastify cannot even route meets the first stages of a request that counts (and then its 400).
    frameworkErrors: frameworkErrorHandler(publicUrl, planOf(stages, {}).onRequest, isStoreUnavailable),
    clientErrorHandler: clientErrorHandler(publicUrl, unread),
    schemaController: { compilersFactory: { buildSerializer: sharedSerializers() } },
  };
}

/** Where asking the store for news reads (SQLite), the requests of a turn share one look (http/server.ts). */
function lookOnceOf(changes: ChangeFeed): ((serve: () => void) => void) | undefined {
  return changes.checkReads ? (serve) => changes.checked(serve) : undefined;
}

/** What every route shares: the schemas the document names, how input is validated, how errors are answered. */
function everyRoute(app: App, publicUrl: string): void {
  app.setValidatorCompiler(validatorCompiler(NAMED_SCHEMAS));
  for (const schema of NAMED_SCHEMAS) app.addSchema(schema);
  app.setErrorHandler(errorHandler(publicUrl, isStoreUnavailable));
  app.setNotFoundHandler(notFoundHandler(publicUrl));
  // JSON only: any other body is a 415. Fastify's own JSON parser, keeping the text as sent for the request log.
  app.removeContentTypeParser(['text/plain', 'application/json']);
  const json = app.getDefaultJsonParser('error', 'error');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    request.bodyText = body as string;
    void json(request, body as string, done);
  });
  // What counts nothing is said in the document too (openapi/transforms.ts), from the route's own config.
  app.addHook('onRoute', (route) => {
    if ((route.config as RouteConfig | undefined)?.counted === false)
      route.schema = { ...route.schema, 'x-uncounted': true } as typeof route.schema;
  });
}

/** What needs no key and counts nothing: the document, the docs, the problem pages, the versions, the scenarios. */
function documentation(app: App, config: PublicConfig, versions: Versioning, scenarios: ScenarioCatalogue): void {
  openapiRoutes(app);
  problemPages(app, config.ban);
  docsRoutes(app, config.petsGet);
  versionsRoutes(app, { oldest: versions.notices.oldest });
  checkPages(app);
  catalogueRoutes(app, scenarios);
}
