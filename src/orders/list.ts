import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Db } from '../db/database.js';
import { conditionalRead, ETAG_HEADER } from '../http/conditional.js';
import type { FastRoute } from '../http/fast-lane.js';
import { type Cursors, scopeOf } from '../http/pagination.js';
import { problemResponses } from '../http/responses.js';
import { Page, ref } from '../http/schemas.js';
import type { App } from '../http/types.js';
import { keyOf } from '../keys/identify.js';
import { TAG } from '../openapi/tags.js';
import type { VersionNotices } from '../versions/notices.js';
import { NEWEST_VERSION } from '../versions/versions.js';
import type { OrderPages } from './order-pages.js';
import { OrdersRepository } from './repository.js';
import { Order, OrderListQuery } from './schemas.js';

const PATH = '/store/orders';

/** `GET /store/orders` (listOrders): a page of the orders placed with the caller's key. */
export function listOrders(app: App, { db, orderPages, cursors }: { db: Db; orderPages: OrderPages; cursors: Cursors }): void {
  const orders = new OrdersRepository(db);
  // When each request's read began, in the pages' generations: a page read before a change is not kept.
  const readSince = new WeakMap<FastifyRequest, number>();
  const read = conditionalRead(
    {
      operationId: 'listOrders',
      summary: 'List your orders',
      description:
        'The orders placed with your API key, in ascending id order, optionally filtered by status. Paginate with `cursor`.\n\nThe interactive docs offer no "Try it out" here: the answer lists every order of the key you authorized with, which a page shown on a shared screen or in a screenshot should not reveal. Call it from your own client.',
      tags: [TAG.orders],
      'x-hideTryItPanel': true,
      querystring: OrderListQuery,
    },
    Page(ref(Order), 'A page of your orders.'),
    problemResponses(400),
  );
  app.get(
    PATH,
    {
      ...read,
      onSend: [
        read.onSend,
        // A page answered in full is kept for the fast lane, in its version (test keys never take the lane).
        function keepPageForLane(request: FastifyRequest, reply: FastifyReply, payload: unknown, done: (error: null, payload: unknown) => void) {
          const since = readSince.get(request);
          const etag = reply.getHeader(ETAG_HEADER);
          if (reply.statusCode === 200 && since !== undefined && typeof payload === 'string' && typeof etag === 'string') {
            const key = keyOf(request);
            if (!key.test) orderPages.keep(key.id, pageKey(request.apiVersion, request.url), { body: payload, etag }, since);
          }
          done(null, payload);
        },
      ],
    },
    async (request) => {
      readSince.set(request, orderPages.generation());
      const { id } = keyOf(request);
      const { status } = request.query;
      const scope = scopeOf('orders', id, { status });
      return cursors.pageOf(await orders.list(id, { status }, cursors.pageRequest(request.query, scope)), scope);
    },
  );
}

/** Where a page is kept: by its URL, and for an older version by its version too. */
function pageKey(version: string, url: string): string {
  return version === NEWEST_VERSION ? url : `${version} ${url}`;
}

/**
 * `GET /store/orders` for the fast lane (http/fast-lane.ts): a page this key was answered before, with
 * this very URL and in this version, while nothing changed its orders (./order-pages.ts).
 */
export function listOrdersFastRoute(orderPages: OrderPages, notices: VersionNotices): FastRoute {
  const query = `${PATH}?`;
  return {
    url: PATH,
    headersFor: (version) => notices.headers(version),
    match: (url) => (url === PATH || url.startsWith(query) ? url : undefined),
    answerFor: (url, keyId, version) => orderPages.find(keyId, pageKey(version, url)),
  };
}
