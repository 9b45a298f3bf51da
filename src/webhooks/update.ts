import { problemResponses } from '../http/responses.js';
import { ref } from '../http/schemas.js';
import type { App } from '../http/types.js';
import { keyOf } from '../keys/identify.js';
import { TAG } from '../http/tags.js';
import { checkDestination, endpointNotFound, type WebhookDeps } from './deps.js';
import { Endpoint, EndpointParams, EndpointPatch } from './schemas.js';

/**
 * `PATCH /webhook-endpoints/{endpointId}` (updateWebhookEndpoint):
 * its URL, types, description, or whether it is enabled.
 */
export function updateWebhookEndpoint(app: App, { webhooks }: { webhooks: WebhookDeps }): void {
  app.patch(
    '/webhook-endpoints/:endpointId',
    {
      schema: {
        operationId: 'updateWebhookEndpoint',
        summary: 'Change one of your webhook endpoints',
        description:
          'Sets what you send, and leaves the rest. `enabled: true` enables an endpoint that was disabled (by a ' +
          '`410`, by failing deliveries, or by you): it receives the events written from then on, and its ' +
          'deliveries still pending resume. Its URL is judged again then, as at creation: a `400` when it may not ' +
          'receive webhooks (any more).',
        tags: [TAG.webhooks],
        'x-stability': 'experimental',
        params: EndpointParams,
        body: ref(EndpointPatch),
        response: { 200: ref(Endpoint), ...problemResponses(400, 404, 413, 415) },
      },
    },
    async (request) => {
      const owner = keyOf(request).id;
      // Enabling sends again: the URL it would send to is judged now, whenever it was saved.
      const url =
        request.body.url ??
        (request.body.enabled === true
          ? (await webhooks.endpoints.find(owner, request.params.endpointId))?.url
          : undefined);
      if (url !== undefined) await checkDestination(url, webhooks.policy);
      const endpoint = await webhooks.endpoints.update(owner, request.params.endpointId, request.body);
      if (!endpoint) throw endpointNotFound(request.params.endpointId);
      return endpoint;
    },
  );
}
