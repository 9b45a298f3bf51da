import type { Clock } from '../clock.js';
import type { Transactions } from '../db/group-commit.js';
import { ProblemError } from '../http/problems.js';
import { problemResponses } from '../http/responses.js';
import { ref } from '../http/schemas.js';
import type { App } from '../http/types.js';
import { keyOf } from '../keys/identify.js';
import { TAG } from '../openapi/tags.js';
import { isCancellable } from './lifecycle.js';
import type { OrderMoves } from './moves.js';
import { notFound } from './not-found.js';
import { Order, OrderParams } from './schemas.js';

export interface CancelOrderDeps {
  transactions: Transactions;
  moves: OrderMoves;
  clock: Clock;
}

/** `DELETE /store/orders/{orderId}` (cancelOrder): cancels one order of the caller's key, unless delivered. */
export function cancelOrder(app: App, { transactions, moves, clock }: CancelOrderDeps): void {
  app.delete(
    '/store/orders/:orderId',
    {
      schema: {
        operationId: 'cancelOrder',
        summary: 'Cancel one of your orders',
        description:
          'Sets the status of a `placed` or `approved` order to `cancelled` (an `order.cancelled` event) and returns the order. Cancelling a cancelled order changes nothing; a delivered order cannot be cancelled (`409`).',
        tags: [TAG.orders],
        'x-stability': 'experimental',
        params: OrderParams,
        response: { 200: ref(Order), ...problemResponses(400, 404, 409) },
      },
    },
    async (request) => {
      const key = keyOf(request);
      const id = request.params.orderId;
      const { order, moved } = await transactions.run(async (trx) => {
        const found = await moves.lock(trx, key.id, id);
        if (!found) throw notFound(id);
        if (found.status === 'cancelled') return { order: found, moved: false };
        if (!isCancellable(found.status)) throw new ProblemError('order-not-cancellable', `Order ${id} was ${found.status} and cannot be cancelled.`);
        return { order: await moves.move(trx, { owner: key.id, livemode: !key.test, order: found }, 'cancelled', clock()), moved: true };
      });
      if (moved) moves.moved([order]);
      return order;
    },
  );
}
