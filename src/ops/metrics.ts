import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** The service's Prometheus metrics, on a registry of its own (several apps can live in one test). */
export function createMetrics() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'petstore_' });
  return {
    registry,
    requests: new Counter({
      name: 'petstore_http_requests_total',
      help: 'Requests answered by the public listener, by route and status.',
      labelNames: ['method', 'route', 'status'] as const,
      registers: [registry],
    }),
    latency: new Histogram({
      name: 'petstore_http_request_duration_seconds',
      help: 'Time to answer a request of the public listener.',
      labelNames: ['method', 'route'] as const,
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers: [registry],
    }),
    refusals: new Counter({
      name: 'petstore_ratelimit_refusals_total',
      help: 'Requests refused with 429, by kind (rate-limited or banned) and plan.',
      labelNames: ['kind', 'plan'] as const,
      registers: [registry],
    }),
    limiterStore: new Gauge({
      name: 'petstore_ratelimit_deciding_store',
      help: 'Where rate limits are decided now (1) and not (0): redis, or memory (alone, or as the fallback while Redis is down).',
      labelNames: ['store'] as const,
      registers: [registry],
    }),
    bans: new Counter({
      name: 'petstore_ratelimit_bans_total',
      help: 'Temporary bans started, by plan.',
      labelNames: ['plan'] as const,
      registers: [registry],
    }),
  };
}

export type Metrics = ReturnType<typeof createMetrics>;
