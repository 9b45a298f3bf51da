import { conflictResponse, LOCATION_HEADER, problemResponses } from '../http/responses.js';
import { ref } from '../http/schemas.js';
import type { App } from '../http/types.js';
import { IdempotencyHeaders, idempotencyKeyOf, markReplayed, REPLAYED_RESPONSE_HEADER } from '../idempotency/header.js';
import { ownerOf } from '../keys/identify.js';
import { TAG } from '../http/tags.js';
import type { OrderPlacement } from './placement.js';
import { NewOrder, Order } from './schemas.js';

/** `POST /store/orders` (placeOrder): orders an available pet, safely retried with an `Idempotency-Key`. */
export function placeOrder(app: App, { placement, publicUrl }: { placement: OrderPlacement; publicUrl: string }): void {
  app.post(
    '/store/orders',
    {
      schema: {
        operationId: 'placeOrder',
        summary: 'Place an order',
        description:
          'Orders an `available` pet. Send an `Idempotency-Key` to make retries safe: a replay gets the original ' +
          '`201` (with `Idempotent-Replayed: true`). Placing an order does not reserve the pet. The order then ' +
          'moves by itself (`order.placed`, then `order.approved`, then `order.delivered`: see `GET /events`).',
        tags: [TAG.orders],
        'x-stability': 'beta',
        headers: IdempotencyHeaders,
        body: ref(NewOrder),
        response: {
          201: {
            ...ref(Order),
            description: 'The order placed (or, on a replay, the order the key placed).',
            headers: {
              [LOCATION_HEADER]: {
                type: 'string',
                format: 'uri',
                maxLength: 2048,
                description: 'The URL of the order.',
              },
              ...REPLAYED_RESPONSE_HEADER,
            },
          },
          ...problemResponses(400, 404, 413, 415, 422),
          ...conflictResponse('pet-not-available', 'idempotency-key-in-progress'),
        },
      },
    },
    async (request, reply) => {
      const placed = await placement.place(ownerOf(request), request.body, idempotencyKeyOf(request.headers));
      markReplayed(reply, placed);
      return reply.code(201).header(LOCATION_HEADER, `${publicUrl}/store/orders/${placed.order.id}`).send(placed.order);
    },
  );
}
