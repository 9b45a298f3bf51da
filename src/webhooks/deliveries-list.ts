import { type Cursors, scopeOf } from '../http/pagination.js';
import { problemResponses } from '../http/responses.js';
import { Page, PageQuery, ref } from '../http/schemas.js';
import type { App } from '../http/types.js';
import { keyOf } from '../keys/identify.js';
import { TAG } from '../http/tags.js';
import { endpointNotFound, type WebhookDeps } from './deps.js';
import { Delivery, EndpointParams } from './schemas.js';

/**
 * `GET /webhook-endpoints/{endpointId}/deliveries` (listWebhookDeliveries): the endpoint's delivery log, newest first.
 */
export function listWebhookDeliveries(
  app: App,
  { webhooks, cursors }: { webhooks: WebhookDeps; cursors: Cursors },
): void {
  app.get(
    '/webhook-endpoints/:endpointId/deliveries',
    {
      schema: {
        operationId: 'listWebhookDeliveries',
        summary: "List one endpoint's deliveries",
        description:
          'One entry per event sent to the endpoint, newest first, with every attempt (when, the status or the ' +
          'error, how long) and when the next is due. Kept as long as events are.',
        tags: [TAG.webhooks],
        'x-stability': 'experimental',
        params: EndpointParams,
        querystring: PageQuery,
        response: {
          200: Page(ref(Delivery), 'A page of the delivery log, newest first.'),
          ...problemResponses(400, 404),
        },
      },
    },
    async (request) => {
      const owner = keyOf(request).id;
      const { endpointId } = request.params;
      if (!(await webhooks.endpoints.find(owner, endpointId))) throw endpointNotFound(endpointId);
      const scope = scopeOf('webhook-deliveries', owner, { endpointId });
      const { afterId, limit } = cursors.pageRequest(request.query, scope);
      const { rows, more } = await webhooks.deliveries.list(owner, endpointId, afterId, limit);
      const last = rows.at(-1);
      return {
        data: rows.map((row) => row.delivery),
        nextCursor: more && last ? cursors.encode(last.seq, scope) : null,
      };
    },
  );
}
