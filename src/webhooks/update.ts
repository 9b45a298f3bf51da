import { problemResponses } from '../http/responses.js';
import { ref } from '../http/schemas.js';
import type { App } from '../http/types.js';
import { keyOf } from '../keys/identify.js';
import { TAG } from '../openapi/tags.js';
import { checkDestination, endpointNotFound, type WebhookDeps } from './deps.js';
import { Endpoint, EndpointParams, EndpointPatch } from './schemas.js';

/** `PATCH /webhook-endpoints/{endpointId}` (updateWebhookEndpoint): its URL, types, description, or whether it is enabled. */
export function updateWebhookEndpoint(app: App, { webhooks }: { webhooks: WebhookDeps }): void {
  app.patch(
    '/webhook-endpoints/:endpointId',
    {
      schema: {
        operationId: 'updateWebhookEndpoint',
        summary: 'Change one of your webhook endpoints',
        description:
          'Sets what you send, and leaves the rest. `enabled: true` enables an endpoint that was disabled (by a `410`, by failing deliveries, or by you): it receives the events written from then on, and its deliveries still pending resume.',
        tags: [TAG.webhooks],
        'x-stability': 'experimental',
        params: EndpointParams,
        body: ref(EndpointPatch),
        response: { 200: ref(Endpoint), ...problemResponses(400, 404, 413, 415) },
      },
    },
    async (request) => {
      if (request.body.url !== undefined) await checkDestination(request.body.url, webhooks.policy);
      const endpoint = await webhooks.endpoints.update(keyOf(request).id, request.params.endpointId, request.body);
      if (!endpoint) throw endpointNotFound(request.params.endpointId);
      return endpoint;
    },
  );
}
