import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Db } from '../db/database.js';
import { conditionalRead, ETAG_FIELD } from '../http/conditional.js';
import { type Cursors, scopeOf } from '../http/pagination.js';
import { JSON_CONTENT_TYPE, problemResponses } from '../http/responses.js';
import { Page, ref } from '../http/schemas.js';
import type { App } from '../http/types.js';
import { keyOf } from '../keys/identify.js';
import { TAG } from '../http/tags.js';
import { answeredInVersion } from '../versions/versioning.js';
import { NEWEST_VERSION } from '../versions/versions.js';
import type { OrderPages, ReadStart } from './order-pages.js';
import { OrdersRepository } from './repository.js';
import { Order, OrderListQuery } from './schemas.js';

const PATH = '/store/orders';

/** `GET /store/orders` (listOrders): a page of the orders placed with the caller's key. */
export function listOrders(
  app: App,
  { db, orderPages, cursors }: { db: Db; orderPages: OrderPages; cursors: Cursors },
): void {
  const orders = new OrdersRepository(db);
  // When each request's read from the store began: a page read before a change is not kept (./order-pages.ts).
  const readSince = new WeakMap<FastifyRequest, ReadStart>();
  const read = conditionalRead(
    {
      operationId: 'listOrders',
      summary: 'List your orders',
      description:
        'The orders placed with your API key, in ascending id order, optionally filtered by status. Paginate with ' +
        '`cursor`.\n\nThe interactive docs offer no "Try it out" here: the answer lists every order of the key you ' +
        'authorized with, which a page shown on a shared screen or in a screenshot should not reveal. Call it from ' +
        'your own client.',
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
      // After the stages' own (the conditional stage's ETag): the page kept as it is answered.
      onSend: keepPage(orderPages, readSince),
    },
    async (request, reply) => {
      const key = keyOf(request);
      const { id } = key;
      // A live key's page held in memory is answered as it was, in its version, with its ETag
      // (http/conditional.ts). Test keys read the store: what they practise (faults, their clock) stays
      // off the live path.
      const stamp = request.rateLimit.stamp;
      const held = key.test ? undefined : orderPages.find(id, pageKey(request.apiVersion, request.url), stamp);
      if (held !== undefined) {
        answeredInVersion(request);
        reply.header(ETAG_FIELD, held.etag).type(JSON_CONTENT_TYPE);
        return held.body;
      }
      readSince.set(request, orderPages.readStart(stamp));
      const { status } = request.query;
      const scope = scopeOf('orders', id, { status });
      return cursors.pageOf(await orders.list(id, { status }, cursors.pageRequest(request.query, scope)), scope);
    },
  );
}

/**
 * The route's last `onSend` step: a live key's page read from the store and answered in full is kept, in its version.
 */
function keepPage(orderPages: OrderPages, readSince: WeakMap<FastifyRequest, ReadStart>) {
  return function keepPage(
    request: FastifyRequest,
    reply: FastifyReply,
    payload: unknown,
    done: (error: null, payload: unknown) => void,
  ) {
    const since = readSince.get(request);
    const etag = reply.getHeader(ETAG_FIELD);
    if (reply.statusCode === 200 && since !== undefined && typeof payload === 'string' && typeof etag === 'string') {
      const key = keyOf(request);
      if (!key.test) orderPages.keep(key.id, pageKey(request.apiVersion, request.url), { body: payload, etag }, since);
    }
    done(null, payload);
  };
}

/** Where a page is kept: by its URL, and for an older version by its version too. */
function pageKey(version: string, url: string): string {
  return version === NEWEST_VERSION ? url : `${version} ${url}`;
}
