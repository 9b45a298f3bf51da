import { problemResponses } from '../http/responses.js';
import { ref } from '../http/schemas.js';
import type { App } from '../http/types.js';
import { keyOf } from '../keys/identify.js';
import { TAG } from '../http/tags.js';
import { endpointNotFound, type WebhookDeps } from './deps.js';
import { Endpoint, EndpointParams } from './schemas.js';

/** `GET /webhook-endpoints/{endpointId}` (getWebhookEndpoint). */
export function getWebhookEndpoint(app: App, { webhooks }: { webhooks: WebhookDeps }): void {
  app.get(
    '/webhook-endpoints/:endpointId',
    {
      schema: {
        operationId: 'getWebhookEndpoint',
        summary: 'Get one of your webhook endpoints',
        description: "Whether it is enabled (and if not, why), what it is sent, and its secret's first characters.",
        tags: [TAG.webhooks],
        'x-stability': 'experimental',
        params: EndpointParams,
        response: { 200: ref(Endpoint), ...problemResponses(400, 404) },
      },
    },
    async (request) => {
      const endpoint = await webhooks.endpoints.find(keyOf(request).id, request.params.endpointId);
      if (!endpoint) throw endpointNotFound(request.params.endpointId);
      return endpoint;
    },
  );
}
