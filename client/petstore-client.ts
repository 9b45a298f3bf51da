/** One method per operation of the API; the types come from the generated OpenAPI types. */
import type { components, operations } from './generated/schema.js';
import type { RateLimitState } from './rate-limit.js';
import { Transport, type TransportOptions } from './transport.js';

export type Pet = components['schemas']['Pet'];
export type Order = components['schemas']['Order'];
export type NewOrder = components['schemas']['NewOrder'];
export type Usage = components['schemas']['Usage'];

type JsonOf<Op extends keyof operations, Status extends keyof operations[Op]['responses']> = operations[Op]['responses'][Status] extends {
  content: { 'application/json': infer T };
}
  ? T
  : never;
type QueryOf<Op extends keyof operations> = NonNullable<operations[Op]['parameters']['query']>;

export type PetPage = JsonOf<'listPets', 200>;
export type OrderPage = JsonOf<'listOrders', 200>;
export type ListPetsQuery = QueryOf<'listPets'>;
export type ListOrdersQuery = QueryOf<'listOrders'>;
export type PetId = operations['getPet']['parameters']['path']['petId'];
export type OrderId = operations['getOrder']['parameters']['path']['orderId'];

export interface PetstoreClientOptions extends TransportOptions {
  /** `pet_…`, or a test key `pet_test_…` (see `prefer`). */
  apiKey: string;
  /** Default: `http://localhost:8080`. */
  baseUrl?: string;
}

export class PetstoreClient {
  readonly #transport: Transport;

  constructor({ apiKey, baseUrl = 'http://localhost:8080', ...options }: PetstoreClientOptions) {
    this.#transport = new Transport(baseUrl, apiKey, options);
  }

  /** The rate-limit state of the newest response (every response's goes to `onResponse`). */
  get rateLimit(): RateLimitState | undefined {
    return this.#transport.rateLimit;
  }

  /**
   * Reads answered `304 Not Modified` for a body the client kept (it sends `If-None-Match` for what it
   * holds): each one a request that counted nothing toward the key's limits.
   */
  get savedByCache(): number {
    return this.#transport.savedByCache;
  }

  /** `GET /pets` (beta): the catalogue, by ascending id; pass `nextCursor` as `cursor` for the next page. */
  listPets(query: ListPetsQuery = {}): Promise<PetPage> {
    return this.#transport.send({ operation: 'listPets', method: 'GET', path: '/pets', query });
  }

  /**
   * `GET /pets/{petId}`.
   * @deprecated Answers `410` (`SunsetError`) from its sunset date; every pet stays readable in `listPets`.
   */
  getPet(petId: PetId): Promise<Pet> {
    return this.#transport.send({ operation: 'getPet', method: 'GET', path: `/pets/${petId}` });
  }

  /** `GET /store/orders`: the orders placed with this key. */
  listOrders(query: ListOrdersQuery = {}): Promise<OrderPage> {
    return this.#transport.send({ operation: 'listOrders', method: 'GET', path: '/store/orders', query });
  }

  /**
   * `POST /store/orders` (beta). Always sent with an `Idempotency-Key` (a new UUID unless you pass one),
   * so the client may retry it: a replay gets the original order, never a second one.
   */
  placeOrder(order: NewOrder, { idempotencyKey = crypto.randomUUID() }: { idempotencyKey?: string } = {}): Promise<Order> {
    const headers = { 'idempotency-key': idempotencyKey };
    return this.#transport.send({ operation: 'placeOrder', method: 'POST', path: '/store/orders', body: order, headers });
  }

  /** `GET /store/orders/{orderId}` (experimental). */
  getOrder(orderId: OrderId): Promise<Order> {
    return this.#transport.send({ operation: 'getOrder', method: 'GET', path: `/store/orders/${orderId}` });
  }

  /** `GET /usage` (beta): the plan, both windows, the ban in force and today's count; asking counts nothing. */
  usage(): Promise<Usage> {
    return this.#transport.send({ operation: 'getUsage', method: 'GET', path: '/usage' });
  }

  /** `DELETE /store/orders/{orderId}` (experimental): cancels; cancelling twice is harmless. */
  cancelOrder(orderId: OrderId): Promise<Order> {
    return this.#transport.send({ operation: 'cancelOrder', method: 'DELETE', path: `/store/orders/${orderId}` });
  }
}
