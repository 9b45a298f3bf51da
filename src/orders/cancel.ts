import type { ChangeFeed } from '../db/change-feed.js';
import type { Db } from '../db/database.js';
import { ProblemError } from '../http/problems.js';
import { problemResponses } from '../http/responses.js';
import { ref } from '../http/schemas.js';
import type { App } from '../http/types.js';
import { keyOf } from '../keys/identify.js';
import { TAG } from '../openapi/tags.js';
import { notFound } from './not-found.js';
import { OrdersRepository } from './repository.js';
import { Order, OrderParams } from './schemas.js';

/** `DELETE /store/orders/{orderId}` (cancelOrder): cancels one order of the caller's key, unless delivered. */
export function cancelOrder(app: App, { db, changes }: { db: Db; changes: ChangeFeed }): void {
  const orders = new OrdersRepository(db, changes);
  app.delete(
    '/store/orders/:orderId',
    {
      schema: {
        operationId: 'cancelOrder',
        summary: 'Cancel one of your orders',
        description:
          'Sets the status to `cancelled` and returns the order. Cancelling a cancelled order changes nothing; a delivered order cannot be cancelled (`409`).',
        tags: [TAG.orders],
        'x-stability': 'experimental',
        params: OrderParams,
        response: { 200: ref(Order), ...problemResponses(400, 404, 409) },
      },
    },
    async (request) => {
      const owner = keyOf(request).id;
      const order = await orders.find(owner, request.params.orderId);
      if (!order) throw notFound(request.params.orderId);
      if (order.status === 'delivered') throw new ProblemError('order-not-cancellable', `Order ${order.id} was delivered and cannot be cancelled.`);
      if (order.status !== 'cancelled') await orders.setStatus(owner, order.id, 'cancelled');
      return { ...order, status: 'cancelled' as const };
    },
  );
}
