import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from './clock.js';
import type { PublicConfig } from './config.js';
import type { FaultDraws } from './faults/draws.js';
import { PREFER_HEADER } from './faults/prefer.js';
import { faultsStage, type StepsAhead } from './faults/stage.js';
import { conditionalStage, IF_NONE_MATCH_HEADER } from './http/conditional.js';
import { corsStage } from './http/cors.js';
import { httpChecksStage } from './http/errors.js';
import { routingStage } from './http/method-not-allowed.js';
import type { Connections } from './http/in-flight.js';
import { REQUEST_ID_HEADER, requestIdStage } from './http/request-id.js';
import { drainingStage } from './http/server.js';
import type { Stage } from './http/stages.js';
import { IDEMPOTENCY_KEY_HEADER_NAME } from './idempotency/header.js';
import {
  API_KEY_HEADER,
  AUTHORIZATION_HEADER,
  type Bearers,
  type ClockOf,
  type FindKey,
  identifyStage,
} from './keys/identify.js';
import { clientStage } from './oauth/client-stage.js';
import { requestLogStage } from './request-log/stage.js';
import type { RequestLog } from './request-log/log.js';
import { accessLogStage } from './ops/access-log.js';
import { type Metrics, metricsStage } from './ops/metrics.js';
import { limitStage } from './ratelimit/stage.js';
import type { LimiterStore } from './ratelimit/store.js';
import type { Cards } from './report-card/cards.js';
import { cardStage } from './report-card/stage.js';
import type { Versioning } from './versions/versioning.js';
import { VERSION_HEADER } from './versions/versions.js';

/** What browsers may send (http/cors.ts): the components' own header names. */
const CORS_LISTS = {
  allowed: [
    API_KEY_HEADER,
    AUTHORIZATION_HEADER,
    'Content-Type',
    IDEMPOTENCY_KEY_HEADER_NAME,
    REQUEST_ID_HEADER,
    PREFER_HEADER,
    IF_NONE_MATCH_HEADER,
    VERSION_HEADER,
  ],
  methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
};

/** What the stages are made of: each component's part. */
export interface StageDeps {
  config: Pick<PublicConfig, 'publicUrl'>;
  limiter: LimiterStore;
  metrics: Metrics;
  clock: Clock;
  findKey: FindKey;
  clockOf: ClockOf;
  /** Access tokens (oauth/), and keys found by their id. */
  bearers: Omit<Bearers, 'clock'>;
  cards: Cards;
  /** Test keys' exchanges (request-log/). */
  requestLog: RequestLog;
  versions: Versioning;
  draws: FaultDraws;
  /** Test keys' scripts (scenarios/): the step a request would meet. */
  steps: StepsAhead;
  connections: Connections;
  logger: FastifyBaseLogger | false;
  /** Whether the service is stopping (src/main.ts): answers then close their connections. */
  draining: () => boolean;
}

/**
 * Every request's stages, in order (docs/design.md#one-pipeline-of-stages): the request's phases run them
 * top to bottom, the answer's bottom to top. Each is one component's; adding a stage is adding its file
 * and a line here.
 */
export function requestStages(deps: StageDeps): Stage[] {
  const { config, limiter, metrics, clock, findKey, clockOf, cards, versions, draws, connections } = deps;
  const { publicUrl } = config;
  const limit = limitStage(limiter, (request) => request.identity, { metrics, publicUrl, clock, connections });
  return [
    requestIdStage,
    identifyStage(findKey, clockOf, { ...deps.bearers, clock }),
    clientStage(findKey, clockOf),
    requestLogStage(deps.requestLog, clock),
    cardStage(cards, clock, connections),
    faultsStage(publicUrl, draws, { steps: deps.steps, refuse: limit.refuse }),
    limit,
    httpChecksStage,
    corsStage(CORS_LISTS),
    routingStage,
    conditionalStage,
    versions.stage,
    drainingStage(deps.draining),
    metricsStage(metrics),
    accessLogStage(deps.logger),
  ];
}
