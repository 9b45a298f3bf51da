import { booleanOf, ConfigError, type Env, positiveIntOf, scheduleOf } from './config-values.js';
import type { WebhookConfig } from './webhooks/dispatcher.js';

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
