import type { Clock } from '../clock.js';
import type { ChangeFeed } from '../db/change-feed.js';
import type { Db } from '../db/database.js';
import { problemResponses } from '../http/responses.js';
import { ref } from '../http/schemas.js';
import type { App } from '../http/types.js';
import { keyOf } from '../keys/identify.js';
import { TAG } from '../openapi/tags.js';
import type { PetCache } from '../pets/pet-cache.js';
import { OrderPlacement } from './placement.js';
import { IDEMPOTENCY_KEY_HEADER, IDEMPOTENT_REPLAYED_HEADER, idempotencyKeyOf, NewOrder, Order, PlaceOrderHeaders } from './schemas.js';

export interface PlaceOrderDeps {
  db: Db;
  changes: ChangeFeed;
  catalogue: PetCache;
  clock: Clock;
  publicUrl: string;
}

/** `POST /store/orders` (placeOrder): orders an available pet, safely retried with an `Idempotency-Key`. */
export function placeOrder(app: App, { db, changes, catalogue, clock, publicUrl }: PlaceOrderDeps): void {
  const placement = new OrderPlacement(db, clock, catalogue, changes);
  app.post(
    '/store/orders',
    {
      schema: {
        operationId: 'placeOrder',
        summary: 'Place an order',
        description:
          'Orders an `available` pet. Send an `Idempotency-Key` to make retries safe: a replay gets the original `201` (with `Idempotent-Replayed: true`). Placing an order does not reserve the pet.',
        tags: [TAG.orders],
        'x-stability': 'beta',
        headers: PlaceOrderHeaders,
        body: ref(NewOrder),
        response: {
          201: {
            ...ref(Order),
            description: 'The order placed (or, on a replay, the order the key placed).',
            headers: {
              location: { type: 'string', format: 'uri', maxLength: 2048, description: 'The URL of the order.' },
              [IDEMPOTENT_REPLAYED_HEADER.toLowerCase()]: {
                type: 'string',
                const: 'true',
                description: 'Present, `true`, when this is the replay of an earlier request with the same `Idempotency-Key` and body.',
              },
            },
          },
          ...problemResponses(400, 404, 409, 413, 415, 422),
        },
      },
    },
    async (request, reply) => {
      const header = request.headers[IDEMPOTENCY_KEY_HEADER];
      const { order, replayed } = await placement.place(keyOf(request).id, request.body, header === undefined ? undefined : idempotencyKeyOf(header));
      if (replayed) reply.header(IDEMPOTENT_REPLAYED_HEADER, 'true');
      return reply.code(201).header('location', `${publicUrl}/store/orders/${order.id}`).send(order);
    },
  );
}
