import type { Db } from '../db/database.js';
import { problemResponses } from '../http/responses.js';
import { ref } from '../http/schemas.js';
import type { App } from '../http/types.js';
import { keyOf } from '../keys/identify.js';
import { TAG } from '../http/tags.js';
import { notFound } from './not-found.js';
import { OrdersRepository } from './repository.js';
import { Order, OrderParams } from './schemas.js';
import { conditionalRead } from '../http/conditional.js';

/** `GET /store/orders/{orderId}` (getOrder): one order of the caller's key. */
export function getOrder(app: App, { db }: { db: Db }): void {
  const orders = new OrdersRepository(db);
  app.get(
    '/store/orders/:orderId',
    conditionalRead(
      {
        operationId: 'getOrder',
        summary: 'Get one of your orders',
        description: "One order placed with your API key. Another key's order is not found (`404`), never forbidden.",
        tags: [TAG.orders],
        'x-stability': 'experimental',
        params: OrderParams,
      },
      ref(Order),
      problemResponses(400, 404),
    ),
    async (request) => {
      const order = await orders.find(keyOf(request).id, request.params.orderId);
      if (!order) throw notFound(request.params.orderId);
      return order;
    },
  );
}
