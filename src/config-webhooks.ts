import { booleanOf, ConfigError, type Env, positiveIntOf, scheduleOf } from './config-values.js';

/** How webhooks are delivered (webhooks/): docs/webhooks.md. */
export interface WebhookConfig {
  /** An answer must come within this, counted from the start of connecting. */
  timeoutMs: number;
  /** The waits before each attempt after the first, in ms; test keys' endpoints have their own. */
  retryScheduleMs: readonly number[];
  testRetryScheduleMs: readonly number[];
  /** An endpoint whose last this many deliveries all failed is disabled. */
  disableAfter: number;
  /** Private, loopback and link-local destinations: refused in production unless WEBHOOK_ALLOW_PRIVATE. */
  allowPrivate: boolean;
  /**
   * Attempts one instance makes at once: in all, for one key (its
   * share), and for one of its endpoints (within the key's).
   */
  concurrency: { total: number; perKey: number; perEndpoint: number };
}

export const WEBHOOK_DEFAULTS = {
  timeoutSeconds: 15,
  // The Standard Webhooks specification's schedule, and a quick one a person can watch for test keys.
  retrySchedule: '5s,5m,30m,2h,5h,10h,10h',
  testRetrySchedule: '1s,5s,30s,2m,5m',
  disableAfter: 20,
  // One key's dead receivers hold at most its share; many keys' at once, the instance's total.
  concurrency: 256,
  keyConcurrency: 8,
  endpointConcurrency: 4,
} as const;

export function webhookConfigOf(env: Env, production: boolean): WebhookConfig {
  return {
    timeoutMs: 1000 * positiveIntOf(env, 'WEBHOOK_TIMEOUT_SECONDS', WEBHOOK_DEFAULTS.timeoutSeconds),
    retryScheduleMs: scheduleOf(env, 'WEBHOOK_RETRY_SCHEDULE', WEBHOOK_DEFAULTS.retrySchedule),
    testRetryScheduleMs: scheduleOf(env, 'WEBHOOK_TEST_RETRY_SCHEDULE', WEBHOOK_DEFAULTS.testRetrySchedule),
    disableAfter: positiveIntOf(env, 'WEBHOOK_DISABLE_AFTER', WEBHOOK_DEFAULTS.disableAfter),
    allowPrivate: !production || booleanOf(env, 'WEBHOOK_ALLOW_PRIVATE', false),
    concurrency: concurrencyOf(env),
  };
}

/** The sender's shares: an endpoint's within its key's, a key's within the instance's. */
function concurrencyOf(env: Env): WebhookConfig['concurrency'] {
  const total = positiveIntOf(env, 'WEBHOOK_CONCURRENCY', WEBHOOK_DEFAULTS.concurrency);
  const perKey = positiveIntOf(env, 'WEBHOOK_KEY_CONCURRENCY', WEBHOOK_DEFAULTS.keyConcurrency);
  const perEndpoint = positiveIntOf(env, 'WEBHOOK_ENDPOINT_CONCURRENCY', WEBHOOK_DEFAULTS.endpointConcurrency);
  if (perKey > total)
    throw new ConfigError('WEBHOOK_KEY_CONCURRENCY', `may not exceed WEBHOOK_CONCURRENCY (${total}), got ${perKey}`);
  if (perEndpoint > perKey)
    throw new ConfigError(
      'WEBHOOK_ENDPOINT_CONCURRENCY',
      `may not exceed WEBHOOK_KEY_CONCURRENCY (${perKey}), got ${perEndpoint}`,
    );
  return { total, perKey, perEndpoint };
}
