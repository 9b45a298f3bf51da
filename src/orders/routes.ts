import type { Clock } from '../clock.js';
import type { Db } from '../db/database.js';
import { keyOf } from '../http/identity.js';
import { pageRequest } from '../http/pagination.js';
import { ProblemError } from '../http/problems.js';
import { problemResponses } from '../http/responses.js';
import { Page, ref } from '../http/schemas.js';
import type { App } from '../http/types.js';
import { TAG } from '../openapi/tags.js';
import type { PetCache } from '../pets/pet-cache.js';
import { OrderPlacement } from './placement.js';
import { OrdersRepository } from './repository.js';
import { IDEMPOTENCY_KEY_HEADER, IDEMPOTENT_REPLAYED_HEADER, idempotencyKeyOf, NewOrder, Order, OrderListQuery, OrderParams, PlaceOrderHeaders } from './schemas.js';

export interface OrdersRouteDeps {
  db: Db;
  catalogue: PetCache;
  clock: Clock;
  publicUrl: string;
}

export function ordersRoutes(app: App, { db, catalogue, clock, publicUrl }: OrdersRouteDeps): void {
  const orders = new OrdersRepository(db);
  const placement = new OrderPlacement(db, clock, catalogue);

  app.get(
    '/store/orders',
    {
      schema: {
        operationId: 'listOrders',
        summary: 'List your orders',
        description:
          'The orders placed with your API key, in ascending id order, optionally filtered by status. Paginate with `cursor`.\n\nThe interactive docs offer no "Try it out" here: the answer lists every order of the key you authorized with, which a page shown on a shared screen or in a screenshot should not reveal. Call it from your own client.',
        tags: [TAG.orders],
        'x-hideTryItPanel': true,
        querystring: OrderListQuery,
        response: { 200: Page(ref(Order), 'A page of your orders.'), ...problemResponses(400) },
      },
    },
    async (request) => orders.list(keyOf(request).id, { status: request.query.status }, pageRequest(request.query)),
  );

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
              [IDEMPOTENT_REPLAYED_HEADER.toLowerCase()]: { type: 'string', const: 'true', description: 'Present, `true`, when this is the replay of an earlier request with the same `Idempotency-Key` and body.' },
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

  app.get(
    '/store/orders/:orderId',
    {
      schema: {
        operationId: 'getOrder',
        summary: 'Get one of your orders',
        description: 'One order placed with your API key. Another key\'s order is not found (`404`), never forbidden.',
        tags: [TAG.orders],
        'x-stability': 'experimental',
        params: OrderParams,
        response: { 200: ref(Order), ...problemResponses(400, 404) },
      },
    },
    async (request) => {
      const order = await orders.find(keyOf(request).id, request.params.orderId);
      if (!order) throw notFound(request.params.orderId);
      return order;
    },
  );

  app.delete(
    '/store/orders/:orderId',
    {
      schema: {
        operationId: 'cancelOrder',
        summary: 'Cancel one of your orders',
        description: 'Sets the status to `cancelled` and returns the order. Cancelling a cancelled order changes nothing; a delivered order cannot be cancelled (`409`).',
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

// Another key's order is not found, never forbidden: its existence is not disclosed.
function notFound(orderId: number): ProblemError {
  return new ProblemError('not-found', `You have no order ${orderId}.`);
}
