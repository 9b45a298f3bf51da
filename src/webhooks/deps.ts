import type { Clock } from '../clock.js';
import type { EventLog } from '../events/record.js';
import { ProblemError } from '../http/problems.js';
import type { IdempotentWrites } from '../idempotency/writes.js';
import type { DeliveriesRepository } from './deliveries.js';
import type { WebhookConfig } from './dispatcher.js';
import { type DestinationPolicy, refusalOf } from './destinations.js';
import type { EndpointsRepository } from './endpoints.js';

/** What the webhook operations are built from (one file each in this folder). */
export interface WebhookDeps {
  endpoints: EndpointsRepository;
  deliveries: DeliveriesRepository;
  eventLog: EventLog;
  writes: IdempotentWrites;
  clock: Clock;
  policy: DestinationPolicy;
  /** The sender's timeout and shares, which the receiver exam keeps to as deliveries do (report-card/exam.ts). */
  sending: Pick<WebhookConfig, 'timeoutMs' | 'concurrency'>;
}

/** Another key's endpoint is not found, never forbidden: its existence is not disclosed. */
export function endpointNotFound(id: string): ProblemError {
  return new ProblemError('not-found', `You have no webhook endpoint ${id}.`);
}

/** A `400` naming why a URL cannot receive webhooks (./destinations.ts), or nothing. */
export async function checkDestination(url: string, policy: DestinationPolicy): Promise<void> {
  const refused = await refusalOf(url, policy);
  if (refused)
    throw new ProblemError('invalid-request', `This URL cannot receive webhooks: ${refused}.`, {
      errors: [{ in: 'body', name: '/url', message: refused }],
    });
}
