import type { Db } from '../db/database.js';
import { pageOf, pageRequest } from '../http/pagination.js';
import { problemResponses } from '../http/responses.js';
import { Page, ref } from '../http/schemas.js';
import type { App } from '../http/types.js';
import { keyOf } from '../keys/identify.js';
import { TAG } from '../openapi/tags.js';
import { OrdersRepository } from './repository.js';
import { Order, OrderListQuery } from './schemas.js';
import { conditionalRead } from '../http/conditional.js';

/** `GET /store/orders` (listOrders): a page of the orders placed with the caller's key. */
export function listOrders(app: App, { db }: { db: Db }): void {
  const orders = new OrdersRepository(db);
  app.get(
    '/store/orders',
    conditionalRead(
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
    ),
    async (request) => pageOf(await orders.list(keyOf(request).id, { status: request.query.status }, pageRequest(request.query))),
  );
}
