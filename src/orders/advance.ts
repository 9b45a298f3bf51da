import type { Clock } from '../clock.js';
import { ProblemError } from '../http/problems.js';
import { conflictResponse, problemResponses } from '../http/responses.js';
import { ref } from '../http/schemas.js';
import type { App } from '../http/types.js';
import { IdempotencyHeaders, idempotencyKeyOf, markReplayed, REPLAYED_RESPONSE_HEADER } from '../idempotency/header.js';
import { fingerprintOf, type IdempotentWrites } from '../idempotency/writes.js';
import { keyOf, ownerOf } from '../keys/identify.js';
import { TAG } from '../http/tags.js';
import { callerNow } from '../clock.js';
import { nextStatus } from './lifecycle.js';
import type { OrderMoves } from './moves.js';
import { notFound } from './not-found.js';
import { Order, OrderParams } from './schemas.js';

export interface AdvanceOrderDeps {
  writes: IdempotentWrites;
  moves: OrderMoves;
  clock: Clock;
}

/**
 * `POST /store/orders/{orderId}/advance` (advanceOrder): a test key moves its own order one step at
 * once, as the fulfilment would when it falls due, so that a client's handling of every state can be
 * tried without waiting.
 */
export function advanceOrder(app: App, { writes, moves, clock }: AdvanceOrderDeps): void {
  app.post(
    '/store/orders/:orderId/advance',
    {
      schema: {
        operationId: 'advanceOrder',
        summary: 'Move one of your orders one step now (test keys)',
        description:
          'For test keys (`pet_test_…`) only: moves the order one step, `placed` to `approved` or `approved` to ' +
          '`delivered`, at once, with its event, and returns it. A live key gets `403`; a `delivered` or ' +
          '`cancelled` order, `409`. Send an `Idempotency-Key` to make a retry safe: a replay gets the original ' +
          'answer and moves nothing.',
        tags: [TAG.orders],
        'x-stability': 'experimental',
        params: OrderParams,
        headers: IdempotencyHeaders,
        response: {
          200: {
            ...ref(Order),
            description: 'The order, one step further (or, on a replay, as the original request left it).',
            headers: REPLAYED_RESPONSE_HEADER,
          },
          ...problemResponses(400, 403, 404, 422),
          ...conflictResponse('order-not-advanceable', 'idempotency-key-in-progress'),
        },
      },
    },
    async (request, reply) => {
      const key = keyOf(request);
      if (!key.test)
        throw new ProblemError(
          'test-key-required',
          'Only a test key (pet_test_…) can move its orders by hand; live orders move on their own.',
        );
      const id = request.params.orderId;
      const answered = await writes.run(
        ownerOf(request),
        idempotencyKeyOf(request.headers),
        () => fingerprintOf('advanceOrder', { orderId: id }),
        async (trx) => {
          const order = await moves.lock(trx, key.id, id);
          if (!order) throw notFound(id);
          const to = nextStatus(order.status);
          if (to === undefined)
            throw new ProblemError('order-not-advanceable', `Order ${id} is ${order.status}: it moves no further.`);
          const moved = await moves.move(trx, { owner: key.id, order }, to, callerNow(request.identity.clock, clock()));
          return { status: 200, body: moved, orderId: id };
        },
      );
      markReplayed(reply, answered);
      if (!answered.replayed) await moves.moved([{ owner: key.id, order: answered.body }]);
      return answered.body;
    },
  );
}
