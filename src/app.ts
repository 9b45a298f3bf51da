import swagger from '@fastify/swagger';
import { isStoreUnavailable } from './db/errors.js';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyBaseLogger, type FastifyServerOptions, LogController } from 'fastify';

import { problemPages } from './docs/problem-pages.js';
import { FaultDraws } from './faults/draws.js';
import { faultSteps } from './faults/step.js';
import { docsRoutes } from './docs/routes.js';
import { clientErrorHandler } from './http/client-errors.js';
import { sharedSerializers } from './http/serialization.js';
import { errorHandler, frameworkErrorHandler, notFoundHandler, refuseContentEncoding } from './http/errors.js';
import { publicServer } from './http/server.js';
import { Connections } from './http/in-flight.js';
import { answeringHook, type Step } from './http/steps.js';
import { MAX_HEAD_BYTES } from './http/limits.js';
import { collectRoutes, registerMethodNotAllowed, routeEveryMethod } from './http/method-not-allowed.js';
import { unreadAnswerHeaders } from './ratelimit/step.js';
import { requestIdOf } from './http/request-id.js';
import type { App } from './http/types.js';
import { validatorCompiler } from './http/validation.js';
import { swaggerOptions } from './openapi/document.js';
import { NAMED_SCHEMAS } from './openapi/named-schemas.js';
import { openapiRoutes } from './openapi/routes.js';
import { accessLog, type AccessedRequest } from './ops/access-log.js';
import { lazyChildLogger } from './ops/logger.js';
import { type Metrics, requestRecorder } from './ops/metrics.js';
import { apiOperations, recordsOf, type ServiceDeps } from './api-operations.js';
import { type Cards, MemoryCards } from './report-card/cards.js';
import { cardWatch } from './report-card/watch.js';
import { checkPages } from './report-card/pages.js';
import { type Versioning, versioning } from './versions/versioning.js';
import { NEWEST_VERSION, VERSION_HEADER } from './versions/versions.js';
import { versionsRoutes } from './versions/routes.js';
import { requestSteps } from './steps.js';

/**
 * An answer given before a request could be read (malformed, a CONNECT, an address
 * refused) is shaped as a request without a key is: in the newest version.
 */
const UNREAD_ANSWER_HEADERS = { [VERSION_HEADER]: NEWEST_VERSION };

import type { PublicConfig } from './config.js';
import type { ChangeFeed } from './db/change-feed.js';

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * Set on SIGTERM (main.ts): from then on every response closes its connection once sent, so a
     * kept-alive client leaves with its answer instead of holding the drain open until the keep-alive
     * timeout, or having the connection cut while its next request is on the way.
     */
    draining: boolean;
  }
}

export interface PublicAppDeps extends ServiceDeps {
  logger: FastifyBaseLogger | false;
  /** Test keys' report cards (report-card/): in this process's memory unless given (Redis, scaled out). */
  cards?: Cards;
}

/**
 * The public listener's app, built without listening. Every request goes through the same steps:
 * identify the caller, apply the rate limit (headers on every response, 429 here), then, for API
 * operations, require a valid key, then the route's own validation and handler.
 */
export async function buildPublicApp({
  config,
  db,
  changes,
  limiter,
  metrics,
  clock,
  logger,
  cards = new MemoryCards(),
}: PublicAppDeps): Promise<App> {
  const { publicUrl } = config;
  const records = recordsOf({ config, db, changes, limiter, clock });
  const { keyCache, clocks } = records;
  const faults = faultSteps(publicUrl, new FaultDraws());
  const connections = new Connections(clock);
  const watch = cardWatch(cards, clock, connections);
  const versions = versioning({ clock, publicUrl, oldestSunsetAt: config.oldestVersionSunsetAt, named: NAMED_SCHEMAS });
  const steps = requestSteps({
    config,
    limiter,
    metrics,
    clock,
    findKey: keyCache.find.bind(keyCache),
    clockOf: clocks.of.bind(clocks),
    watch,
    versions,
    faults,
    connections,
  });
  const answered = answerRecorder(metrics, logger);
  const app = Fastify(
    fastifyOptions({ config, changes, limiter, metrics, clock, logger }, steps.first, connections),
  ).withTypeProvider<TypeBoxTypeProvider>();

  everyRequest(app, { steps: steps.beforeRoute, faults, versions, answered, logger, publicUrl, watch });

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
      graded: watch.graded,
      steps: steps.api,
    }),
  );
  documentation(app, config, versions);
  registerMethodNotAllowed(app, routes);
  await app.ready();
  return app;
}

/**
 * Fastify's options for the public listener: its server (http/server.ts),
 * its logger, its limits, and how it answers what never reaches a route.
 */
function fastifyOptions(
  { config, changes, limiter, metrics, clock, logger }: Omit<PublicAppDeps, 'db'>,
  first: Step[],
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
    // one access-log line a request, when answered (app.ts `everyRequest`)
    logController: new LogController({ disableRequestLogging: true }),
    childLoggerFactory: lazyChildLogger,
    bodyLimit: config.bodyLimit,
    routerOptions: { maxParamLength: MAX_HEAD_BYTES },
    trustProxy: config.trustProxy,
    return503OnClosing: true,
    frameworkErrors: frameworkErrorHandler(publicUrl, first, isStoreUnavailable),
    clientErrorHandler: clientErrorHandler(publicUrl, unread),
    schemaController: { compilersFactory: { buildSerializer: sharedSerializers() } },
  };
}

/** Where asking the store for news reads (SQLite), the requests of a turn share one look (http/server.ts). */
function lookOnceOf(changes: ChangeFeed): ((serve: () => void) => void) | undefined {
  return changes.checkReads ? (serve) => changes.checked(serve) : undefined;
}

/** What needs no key and counts nothing: the document, the docs, the problem pages, the versions. */
function documentation(app: App, config: PublicConfig, versions: Versioning): void {
  openapiRoutes(app);
  problemPages(app, config.ban);
  docsRoutes(app, config.petsGet);
  versionsRoutes(app, { oldest: versions.notices.oldest });
  checkPages(app);
}

/** What is recorded of every answer: its metrics and its access line. */
type Answered = (request: AccessedRequest, route: string, status: number, ms: number) => void;

/** Every answer's metrics and access line (one line per request, instead of Fastify's two). */
function answerRecorder(metrics: Metrics, logger: FastifyBaseLogger | false): Answered {
  const record = requestRecorder(metrics);
  const access = logger ? accessLog(logger) : undefined;
  return (request, route, statusCode, ms) => {
    record(request.method, route, statusCode, ms / 1000);
    access?.(request, statusCode, ms);
  };
}

/** What the steps set on a request (each declared by its step's module). */
const REQUEST_FIELDS = [
  'identity',
  'apiVersion',
  'versionRefusal',
  'rateLimit',
  'forcedRefusal',
  'fault',
  'countLater',
  'watched',
] as const;

interface EveryRequestDeps {
  steps: Step[];
  faults: ReturnType<typeof faultSteps>;
  versions: Versioning;
  answered: Answered;
  logger: FastifyBaseLogger | false;
  publicUrl: string;
  /** How test keys' requests reach their report cards (report-card/). */
  watch: Pick<ReturnType<typeof cardWatch>, 'noteBody' | 'cut'>;
}

/**
 * What every request of the public listener passes through
 * Fastify: its steps in order, and what is recorded of its answer.
 */
function everyRequest(
  app: App,
  { steps, faults, versions, answered, logger, publicUrl, watch }: EveryRequestDeps,
): void {
  app.setValidatorCompiler(validatorCompiler(NAMED_SCHEMAS));
  for (const schema of NAMED_SCHEMAS) app.addSchema(schema);
  app.setErrorHandler(errorHandler(publicUrl, isStoreUnavailable));
  app.setNotFoundHandler(notFoundHandler(publicUrl));
  // JSON only: any other body is a 415.
  app.removeContentTypeParser('text/plain');

  // Every request has what the steps set on it from the start (Fastify's request decorators), as
  // Fastify advises: a property added as a request goes, in an order that depends on the request,
  // gives requests shapes of their own, which the code that reads them must all expect.
  for (const name of REQUEST_FIELDS) app.decorateRequest(name, undefined);
  app.decorateRequest('inVersionAlready', false);
  app.addHook('onRequest', answeringHook('firstSteps', steps));
  app.addHook('preParsing', refuseContentEncoding);
  // Once the body is read: the report card notes it as sent (before validation's defaults), then a
  // test key's 500 or 503, so that the card tells a repeat of that body from another request.
  app.addHook('preValidation', answeringHook('afterParsing', [watch.noteBody, faults.failNow]));
  app.addHook('onSend', versions.inVersion);
  app.decorate('draining', false);
  app.addHook('onSend', function closeWhenDrainingAndFault(request, reply, payload, done) {
    if (app.draining) reply.header('connection', 'close');
    faults.resetInstead(request, reply);
    done(null, payload);
  });
  // A client gone before its answer (an upload cut off): said once, at info; nothing failed here.
  app.addHook('onRequestAbort', function noteAbort(request, done) {
    if (logger) logger.info({ reqId: request.id, req: request }, 'request aborted by the client');
    watch.cut(request);
    done();
  });
  app.addHook('onResponse', function recordAnswer(request, reply, done) {
    answered(request, request.routeOptions.url ?? 'unknown', reply.statusCode, reply.elapsedTime);
    done();
  });
}
