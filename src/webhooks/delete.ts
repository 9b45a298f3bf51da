import { problemResponses } from '../http/responses.js';
import type { App } from '../http/types.js';
import { keyOf } from '../keys/identify.js';
import { TAG } from '../http/tags.js';
import { endpointNotFound, type WebhookDeps } from './deps.js';
import { EndpointParams } from './schemas.js';

/** `DELETE /webhook-endpoints/{endpointId}` (deleteWebhookEndpoint): the endpoint and its delivery log. */
export function deleteWebhookEndpoint(app: App, { webhooks }: { webhooks: WebhookDeps }): void {
  app.delete(
    '/webhook-endpoints/:endpointId',
    {
      schema: {
        operationId: 'deleteWebhookEndpoint',
        summary: 'Delete one of your webhook endpoints',
        description:
          'Nothing more is sent to it, and its delivery log goes with it. To stop it for a while and keep its log, ' +
          '`PATCH` it with `enabled: false`.',
        tags: [TAG.webhooks],
        'x-stability': 'experimental',
        params: EndpointParams,
        response: { 204: { description: 'Deleted: no content.', type: 'null' }, ...problemResponses(400, 404) },
      },
    },
    async (request, reply) => {
      if (!(await webhooks.endpoints.delete(keyOf(request).id, request.params.endpointId)))
        throw endpointNotFound(request.params.endpointId);
      return reply.code(204).send(null);
    },
  );
}
