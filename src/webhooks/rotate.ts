import {
  CACHE_CONTROL_HEADER,
  conflictResponse,
  NO_STORE,
  NO_STORE_HEADER,
  problemResponses,
} from '../http/responses.js';
import { ref } from '../http/schemas.js';
import type { App } from '../http/types.js';
import { IdempotencyHeaders, idempotencyKeyOf, markReplayed, REPLAYED_RESPONSE_HEADER } from '../idempotency/header.js';
import { fingerprintOf } from '../idempotency/writes.js';
import { keyOf, ownerOf } from '../keys/identify.js';
import { TAG } from '../http/tags.js';
import { endpointNotFound, type WebhookDeps } from './deps.js';
import { EndpointParams, EndpointWithSecret } from './schemas.js';

/** `POST /webhook-endpoints/{endpointId}/rotate-secret` (rotateWebhookSecret). */
export function rotateWebhookSecret(app: App, { webhooks }: { webhooks: WebhookDeps }): void {
  const { endpoints, writes, clock } = webhooks;
  app.post(
    '/webhook-endpoints/:endpointId/rotate-secret',
    {
      schema: {
        operationId: 'rotateWebhookSecret',
        summary: 'Give one of your webhook endpoints a new signing secret',
        description:
          'Answers the new secret, this once. For 24 hours the old one keeps signing beside it ' +
          '(`webhook-signature` carries both), so your receiver can take the new one in its own time. Send an ' +
          '`Idempotency-Key` to make a retry safe: a replay answers the same new secret.',
        tags: [TAG.webhooks],
        'x-stability': 'experimental',
        params: EndpointParams,
        headers: IdempotencyHeaders,
        response: {
          200: {
            ...ref(EndpointWithSecret),
            description: 'The endpoint and its new signing secret: keep it now.',
            headers: { ...REPLAYED_RESPONSE_HEADER, ...NO_STORE_HEADER },
          },
          ...problemResponses(400, 404, 422),
          ...conflictResponse('idempotency-key-in-progress'),
        },
      },
    },
    async (request, reply) => {
      const key = keyOf(request);
      const { endpointId } = request.params;
      const rotated = await writes.run(
        ownerOf(request),
        idempotencyKeyOf(request.headers),
        () => fingerprintOf('rotateWebhookSecret', { endpointId }),
        async (trx) => {
          const endpoint = await endpoints.withStore(trx).rotate(key.id, endpointId, clock());
          if (!endpoint) throw endpointNotFound(endpointId);
          return { status: 200, body: endpoint };
        },
      );
      markReplayed(reply, rotated);
      return reply.header(CACHE_CONTROL_HEADER, NO_STORE).send(rotated.body);
    },
  );
}
