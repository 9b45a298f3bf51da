import { problemResponses } from '../http/responses.js';
import { Page, PageQuery, ref } from '../http/schemas.js';
import type { App } from '../http/types.js';
import { keyOf } from '../keys/identify.js';
import { TAG } from '../http/tags.js';
import { type Cursors, scopeOf } from '../http/pagination.js';
import type { WebhookDeps } from './deps.js';
import { Endpoint } from './schemas.js';

/** `GET /webhook-endpoints` (listWebhookEndpoints): the caller's endpoints. */
export function listWebhookEndpoints(
  app: App,
  { webhooks, cursors }: { webhooks: WebhookDeps; cursors: Cursors },
): void {
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
      // Endpoints are listed in the order of their ids: a cursor names the last id of the page before.
      const owner = keyOf(request).id;
      const scope = scopeOf('webhook-endpoints', owner);
      const { cursor, limit = 20 } = request.query;
      const after = cursor === undefined ? '' : cursors.decode(cursor, scope);
      const { rows, more } = await webhooks.endpoints.list(owner, after, limit);
      const last = rows.at(-1);
      return { data: rows, nextCursor: more && last ? cursors.encode(last.id, scope) : null };
    },
  );
}
