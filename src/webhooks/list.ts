import { problemResponses } from '../http/responses.js';
import { Page, PageQuery, ref } from '../http/schemas.js';
import type { App } from '../http/types.js';
import { keyOf } from '../keys/identify.js';
import { TAG } from '../openapi/tags.js';
import { textCursorOf, textPageRequest } from './cursors.js';
import type { WebhookDeps } from './deps.js';
import { Endpoint } from './schemas.js';

/** `GET /webhook-endpoints` (listWebhookEndpoints): the caller's endpoints. */
export function listWebhookEndpoints(app: App, { webhooks }: { webhooks: WebhookDeps }): void {
  app.get(
    '/webhook-endpoints',
    {
      schema: {
        operationId: 'listWebhookEndpoints',
        summary: 'List your webhook endpoints',
        description: 'Your webhook endpoints, in a stable order; their secrets only as `secretHint`.',
        tags: [TAG.webhooks],
        'x-stability': 'experimental',
        querystring: PageQuery,
        response: { 200: Page(ref(Endpoint), 'A page of your webhook endpoints.'), ...problemResponses(400) },
      },
    },
    async (request) => {
      const { after, limit } = textPageRequest(request.query);
      const { rows, more } = await webhooks.endpoints.list(keyOf(request).id, after, limit);
      const last = rows.at(-1);
      return { data: rows, nextCursor: more && last ? textCursorOf(last.id) : null };
    },
  );
}
