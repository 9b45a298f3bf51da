import type { Clock } from '../clock.js';
import type { Db } from '../db/database.js';
import { ProblemError } from '../http/problems.js';
import { conflictResponse, problemResponses } from '../http/responses.js';
import { ref } from '../http/schemas.js';
import type { App } from '../http/types.js';
import { keyOf } from '../keys/identify.js';
import { TAG } from '../http/tags.js';
import { callerNow } from '../clock.js';
import type { OrderMoves } from './moves.js';
import { notFound } from './not-found.js';
import { OrdersRepository } from './repository.js';
import { Order, OrderParams } from './schemas.js';

export interface CancelOrderDeps {
  db: Db;
  moves: OrderMoves;
  clock: Clock;
}

/** `DELETE /store/orders/{orderId}` (cancelOrder): cancels one order of the caller's key, unless delivered. */
export function cancelOrder(app: App, { db, moves, clock }: CancelOrderDeps): void {
  const orders = new OrdersRepository(db);
  app.delete(
    '/store/orders/:orderId',
    {
      schema: {
        operationId: 'cancelOrder',
        summary: 'Cancel one of your orders',
        description:
          'Sets the status of a `placed` or `approved` order to `cancelled` (an `order.cancelled` event) and ' +
          'returns the order. Cancelling a cancelled order changes nothing; a delivered order cannot be cancelled ' +
          '(`409`).',
        tags: [TAG.orders],
        'x-stability': 'experimental',
        params: OrderParams,
        response: { 200: ref(Order), ...problemResponses(400, 404), ...conflictResponse('order-not-cancellable') },
      },
    },
    async (request) => {
      const key = keyOf(request);
      const id = request.params.orderId;
      const cancelled = await moves.cancel(db, key.id, id, callerNow(request.identity.clock, clock()));
      if (cancelled) {
        await moves.moved([{ owner: key.id, order: cancelled }]);
        return cancelled;
      }
      // Nothing to cancel: no such order, or one already final, which stays as it is.
      const order = await orders.find(key.id, id);
      if (!order) throw notFound(id);
      if (order.status !== 'cancelled')
        throw new ProblemError('order-not-cancellable', `Order ${id} was ${order.status} and cannot be cancelled.`);
      return order;
    },
  );
}
