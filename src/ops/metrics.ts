import type { Stage } from '../http/stages.js';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { type CounterSeries, TalliedCounter } from './tallies.js';

/**
 * The tick of the event-loop delay metrics unless EVENT_LOOP_RESOLUTION_MS says otherwise: prom-client's own
 * default (a finer one costs CPU even while idle).
 */
export const DEFAULT_EVENT_LOOP_RESOLUTION_MS = 10;

/**
 * The service's Prometheus metrics, on a registry of its own (several apps can live in one test).
 * `eventLoopResolutionMs` is the tick of the event-loop delay metrics: their histogram holds the
 * intervals between ticks, so a block of B ms reads as B to B + the tick.
 */
export function createMetrics({ eventLoopResolutionMs }: { eventLoopResolutionMs?: number } = {}) {
  const registry = new Registry();
  collectDefaultMetrics({
    register: registry,
    prefix: 'petstore_',
    eventLoopMonitoringPrecision: eventLoopResolutionMs ?? DEFAULT_EVENT_LOOP_RESOLUTION_MS,
  });
  const registers = [registry];
  return { registry, ...httpMetrics(registers), ...limitMetrics(registers), ...workMetrics(registers) };
}

type Registers = Registry[];

/** What the public listener answered, and how fast. */
function httpMetrics(registers: Registers) {
  return {
    requests: new TalliedCounter({
      name: 'petstore_http_requests_total',
      help: 'Requests answered by the public listener, by route and status.',
      labelNames: ['method', 'route', 'status'] as const,
      registers,
    }),
    latency: new Histogram({
      name: 'petstore_http_request_duration_seconds',
      help: 'Time to answer a request of the public listener.',
      labelNames: ['method', 'route'] as const,
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers,
    }),
    connectionsClosed: new Counter({
      name: 'petstore_http_connections_closed_total',
      help:
        'Connections the public listener closed itself, by why: pipelining (more requests sent unanswered than one ' +
        'connection may hold), pipelining-flood (refused: its address flooded a moment ago), too-many-connections ' +
        '(refused: its address holds its allowance).',
      labelNames: ['reason'] as const,
      registers,
    }),
  };
}

/** How the rate limits decided. */
function limitMetrics(registers: Registers) {
  return {
    refusals: new TalliedCounter({
      name: 'petstore_ratelimit_refusals_total',
      help: 'Requests refused with 429, by kind (rate-limited or banned) and plan.',
      labelNames: ['kind', 'plan'] as const,
      registers,
    }),
    limiterStore: new Gauge({
      name: 'petstore_ratelimit_deciding_store',
      help:
        'Where rate limits are decided now (1) and not (0): redis, or memory (alone, or as the fallback while ' +
        'Redis is down).',
      labelNames: ['store'] as const,
      registers,
    }),
    bans: new TalliedCounter({
      name: 'petstore_ratelimit_bans_total',
      help: 'Temporary bans started, by plan.',
      labelNames: ['plan'] as const,
      registers,
    }),
  };
}

/** The work off the request path: orders moving, webhooks going out. */
function workMetrics(registers: Registers) {
  return {
    orderMoves: new Counter({
      name: 'petstore_order_moves_total',
      help: 'Orders that entered a state here (placed, approved, delivered, cancelled), each with its event.',
      labelNames: ['to'] as const,
      registers,
    }),
    webhookAttempts: new Counter({
      name: 'petstore_webhook_attempts_total',
      help:
        'Webhook delivery attempts made here, by what they came to: succeeded, retrying (failed, another is due), ' +
        'failed (the last failed), gone (a 410 disabled the endpoint).',
      labelNames: ['outcome'] as const,
      registers,
    }),
    webhookLatency: new Histogram({
      name: 'petstore_webhook_attempt_duration_seconds',
      help: 'How long a webhook delivery attempt took, its answer read (or its timeout).',
      buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15, 30],
      registers,
    }),
    fulfilmentLag: new Gauge({
      name: 'petstore_fulfilment_lag_seconds',
      help: 'How late the oldest due order was when the fulfilment last took it (0: none was waiting).',
      registers,
    }),
  };
}

/** Counts orders entering a state (orders/moves.ts), by a child per state found once. */
export function orderMovesCounter(metrics: Pick<Metrics, 'orderMoves'>) {
  const children = new Map<string, { inc(n: number): void }>();
  return (status: string, orders: number): void => {
    let child = children.get(status);
    if (!child) children.set(status, (child = metrics.orderMoves.labels(status)));
    child.inc(orders);
  };
}

export type Metrics = ReturnType<typeof createMetrics>;

/**
 * Records one answered request. Each route's method and status combinations are looked up once and
 * their series kept (./tallies.ts), found again by the route, method and status themselves: a key
 * built per request (`GET /pets/:petId 200`) would be a rope V8 compares through its runtime.
 */
function requestRecorder(metrics: Metrics) {
  const byRoute = new Map<
    string,
    Map<string, { timer: Histogram.Internal<'method' | 'route'>; counters: Map<number, CounterSeries> }>
  >();
  return (method: string, route: string, status: number, seconds: number): void => {
    let byMethod = byRoute.get(route);
    if (!byMethod) byRoute.set(route, (byMethod = new Map()));
    let series = byMethod.get(method);
    if (!series)
      byMethod.set(method, (series = { timer: metrics.latency.labels({ method, route }), counters: new Map() }));
    let counter = series.counters.get(status);
    if (!counter) series.counters.set(status, (counter = metrics.requests.series({ method, route, status })));
    counter.inc();
    series.timer.observe(seconds);
  };
}

/** The metrics stage: each answer counted and timed, by method, route and status, once it is sent. */
export function metricsStage(metrics: Metrics): Stage {
  const record = requestRecorder(metrics);
  return {
    name: 'metrics',
    forRoute(route) {
      const url = route.url ?? 'unknown';
      return {
        onResponse: (request, reply) => record(request.method, url, reply.statusCode, reply.elapsedTime / 1000),
      };
    },
  };
}
