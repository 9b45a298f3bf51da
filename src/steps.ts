import type { Clock } from './clock.js';
import type { PublicConfig } from './config.js';
import { PREFER_HEADER } from './faults/prefer.js';
import type { faultSteps } from './faults/step.js';
import { IF_NONE_MATCH_HEADER } from './http/conditional.js';
import { corsPolicy } from './http/cors.js';
import { refuseUnknownExpectation, rejectUnknownPath, requireHost } from './http/errors.js';
import { REQUEST_ID_HEADER, setRequestId } from './http/request-id.js';
import type { Step } from './http/steps.js';
import type { Connections } from './http/in-flight.js';
import { IDEMPOTENCY_KEY_HEADER_NAME } from './idempotency/header.js';
import { API_KEY_HEADER, type ClockOf, type FindKey, identifyHook, requireKey } from './keys/identify.js';
import type { Metrics } from './ops/metrics.js';
import { rateLimitHook } from './ratelimit/step.js';
import type { LimiterStore } from './ratelimit/store.js';
import type { cardWatch } from './report-card/watch.js';
import type { Versioning } from './versions/versioning.js';
import { VERSION_HEADER } from './versions/versions.js';

/** What browsers may send (http/cors.ts): the components' own header names. */
export const CORS = corsPolicy({
  allowed: [
    API_KEY_HEADER,
    'Content-Type',
    IDEMPOTENCY_KEY_HEADER_NAME,
    REQUEST_ID_HEADER,
    PREFER_HEADER,
    IF_NONE_MATCH_HEADER,
    VERSION_HEADER,
  ],
  methods: ['GET', 'HEAD', 'POST', 'PATCH', 'DELETE'],
});

/** What the steps are made of: each component's part. */
export interface StepDeps {
  config: Pick<PublicConfig, 'publicUrl' | 'ban'>;
  limiter: LimiterStore;
  metrics: Metrics;
  clock: Clock;
  findKey: FindKey;
  clockOf: ClockOf;
  watch: ReturnType<typeof cardWatch>;
  versions: Versioning;
  faults: ReturnType<typeof faultSteps>;
  connections: Connections;
}

/**
 * The steps of a request before its route, in order: what every request passes (`first`, which a URL
 * Fastify cannot route passes too), what every routed request passes then (`beforeRoute`), and what
 * an API operation adds (`api`). Each component gives its step; the edge (http/) runs them as
 * Fastify hooks (app.ts). Adding a step is adding it to its component and a line here.
 */
export function requestSteps(deps: StepDeps) {
  const { config, limiter, metrics, clock, findKey, clockOf, watch, versions, faults, connections } = deps;
  const first: Step[] = [
    setRequestId,
    CORS.cors,
    identifyHook(findKey, clockOf),
    watch.arrived,
    versions.chooseVersion,
    faults.planFault,
    rateLimitHook(limiter, (request) => request.identity, {
      metrics,
      publicUrl: config.publicUrl,
      clock,
      connections,
    }),
  ];
  return {
    first,
    beforeRoute: [...first, requireHost, refuseUnknownExpectation, CORS.answerPreflight, rejectUnknownPath],
    api: [requireKey, versions.refuseVersion],
  };
}
