import { conflictResponse, problemResponses } from '../http/responses.js';
import { ref } from '../http/schemas.js';
import type { App } from '../http/types.js';
import { IdempotencyHeaders, idempotencyKeyOf, markReplayed, REPLAYED_RESPONSE_HEADER } from '../idempotency/header.js';
import { fingerprintOf } from '../idempotency/writes.js';
import { keyOf, ownerOf } from '../keys/identify.js';
import { TAG } from '../http/tags.js';
import { callerNow } from '../clock.js';
import { endpointNotFound, type WebhookDeps } from './deps.js';
import { Delivery, EndpointParams } from './schemas.js';

/**
 * `POST /webhook-endpoints/{endpointId}/test` (testWebhookEndpoint):
 * a `webhook.test` event, sent to this endpoint alone.
 */
export function testWebhookEndpoint(app: App, { webhooks }: { webhooks: WebhookDeps }): void {
  const { endpoints, deliveries, eventLog, writes, clock } = webhooks;
  app.post(
    '/webhook-endpoints/:endpointId/test',
    {
      schema: {
        operationId: 'testWebhookEndpoint',
        summary: 'Send a test event to one of your webhook endpoints',
        description:
          'Writes a `webhook.test` event (its `data` is `{"endpointId": …}`) and sends it to this endpoint now, ' +
          'signed as every delivery is, retried as every delivery is. Answers the delivery: follow it in the ' +
          "endpoint's delivery log. Send an `Idempotency-Key` to make a retry safe.",
        tags: [TAG.webhooks],
        'x-stability': 'experimental',
        params: EndpointParams,
        headers: IdempotencyHeaders,
        response: {
          202: {
            ...ref(Delivery),
            description: 'The delivery, pending: its first attempt leaves within a second.',
            headers: REPLAYED_RESPONSE_HEADER,
          },
          ...problemResponses(400, 404, 422),
          ...conflictResponse('idempotency-key-in-progress'),
        },
      },
    },
    async (request, reply) => {
      const key = keyOf(request);
      const { endpointId } = request.params;
      const sent = await writes.run(
        ownerOf(request),
        idempotencyKeyOf(request.headers),
        () => fingerprintOf('testWebhookEndpoint', { endpointId }),
        async (trx) => {
          if (!(await endpoints.withStore(trx).find(key.id, endpointId))) throw endpointNotFound(endpointId);
          // The test event is in the key's time, as its others (a test key's clock, test-mode/).
          const now = callerNow(request.identity.clock, clock());
          const event = await eventLog.record(
            trx,
            { owner: key.id, type: 'webhook.test', livemode: !key.test, data: { endpointId } },
            now,
          );
          const seq = await deliveries.add(trx, endpointId, event, now);
          return { status: 202, body: (await deliveries.withStore(trx).find(key.id, endpointId, seq))! };
        },
      );
      markReplayed(reply, sent);
      return reply.code(202).send(sent.body);
    },
  );
}
