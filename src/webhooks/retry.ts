import { ProblemError } from '../http/problems.js';
import { conflictResponse, problemResponses } from '../http/responses.js';
import { ref } from '../http/schemas.js';
import type { App } from '../http/types.js';
import { IdempotencyHeaders, idempotencyKeyOf, markReplayed, REPLAYED_RESPONSE_HEADER } from '../idempotency/header.js';
import { fingerprintOf } from '../idempotency/writes.js';
import { ownerOf } from '../keys/identify.js';
import { TAG } from '../http/tags.js';
import { callerNow } from '../clock.js';
import { seqOfDeliveryId } from './deliveries.js';
import type { WebhookDeps } from './deps.js';
import { Delivery, DeliveryParams } from './schemas.js';

/** `POST /webhook-endpoints/{endpointId}/deliveries/{deliveryId}/retry` (retryWebhookDelivery): send it again now. */
export function retryWebhookDelivery(app: App, { webhooks }: { webhooks: WebhookDeps }): void {
  const { deliveries, writes, clock } = webhooks;
  app.post(
    '/webhook-endpoints/:endpointId/deliveries/:deliveryId/retry',
    {
      schema: {
        operationId: 'retryWebhookDelivery',
        summary: 'Send a delivery again now',
        description:
          'Whatever its state, the delivery is due again at once (its attempt leaves within a second, with the ' +
          'same `webhook-id`); a failed one goes through its schedule again. Send an `Idempotency-Key` to make a ' +
          'retry of this request safe.',
        tags: [TAG.webhooks],
        'x-stability': 'experimental',
        params: DeliveryParams,
        headers: IdempotencyHeaders,
        response: {
          202: { ...ref(Delivery), description: 'The delivery, pending again.', headers: REPLAYED_RESPONSE_HEADER },
          ...problemResponses(400, 404, 422),
          ...conflictResponse('idempotency-key-in-progress'),
        },
      },
    },
    async (request, reply) => {
      const owner = ownerOf(request);
      const { endpointId, deliveryId } = request.params;
      const retried = await writes.run(
        owner,
        idempotencyKeyOf(request.headers),
        () => fingerprintOf('retryWebhookDelivery', { endpointId, deliveryId }),
        async (trx) => {
          const delivery = await deliveries
            .withStore(trx)
            .retryNow(owner.id, endpointId, seqOfDeliveryId(deliveryId), callerNow(owner.clock, clock()));
          if (!delivery)
            throw new ProblemError('not-found', `Webhook endpoint ${endpointId} has no delivery ${deliveryId}.`);
          return { status: 202, body: delivery };
        },
      );
      markReplayed(reply, retried);
      return reply.code(202).send(retried.body);
    },
  );
}
