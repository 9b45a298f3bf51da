/** One method per operation of the API; the types come from the generated OpenAPI types. */
import { streamEvents, type StreamEventsOptions } from './event-stream.js';
import type { components, operations } from './generated/schema.js';
import type { RateLimitState } from './rate-limit.js';
import type { ClientCredentials } from './tokens.js';
import { Transport, type TransportOptions } from './transport.js';

export type Pet = components['schemas']['Pet'];
export type Order = components['schemas']['Order'];
export type NewOrder = components['schemas']['NewOrder'];
export type Usage = components['schemas']['Usage'];
export type Event = components['schemas']['Event'];
export type EventType = Event['type'];
export type WebhookEndpoint = components['schemas']['WebhookEndpoint'];
export type WebhookEndpointWithSecret = components['schemas']['WebhookEndpointWithSecret'];
export type NewWebhookEndpoint = components['schemas']['NewWebhookEndpoint'];
export type WebhookEndpointPatch = components['schemas']['WebhookEndpointPatch'];
export type WebhookDelivery = components['schemas']['WebhookDelivery'];
export type TestClock = components['schemas']['TestClock'];
export type ClockAdvance = components['schemas']['ClockAdvance'];
export type TestDataRemoved = components['schemas']['TestDataRemoved'];
export type TestKey = components['schemas']['TestKey'];
export type ReportCard = components['schemas']['ReportCard'];
export type ReportCheck = ReportCard['checks'][number];
export type WebhookExam = components['schemas']['WebhookExam'];

type JsonOf<
  Op extends keyof operations,
  Status extends keyof operations[Op]['responses'],
> = operations[Op]['responses'][Status] extends {
  content: { 'application/json': infer T };
}
  ? T
  : never;
type QueryOf<Op extends keyof operations> = NonNullable<operations[Op]['parameters']['query']>;

export type PetPage = JsonOf<'listPets', 200>;
export type OrderPage = JsonOf<'listOrders', 200>;
export type EventPage = JsonOf<'listEvents', 200>;
export type WebhookEndpointPage = JsonOf<'listWebhookEndpoints', 200>;
export type WebhookDeliveryPage = JsonOf<'listWebhookDeliveries', 200>;
export type ListPetsQuery = QueryOf<'listPets'>;
export type ListOrdersQuery = QueryOf<'listOrders'>;
export type ListEventsQuery = QueryOf<'listEvents'>;
export type PetId = operations['getPet']['parameters']['path']['petId'];
export type OrderId = operations['getOrder']['parameters']['path']['orderId'];
export type EventId = operations['getEvent']['parameters']['path']['eventId'];

export type { AccessToken, ClientCredentials } from './tokens.js';
export type { StreamEventsOptions } from './event-stream.js';

/**
 * How requests say whose they are: `apiKey`, or `clientId` and `clientSecret` (one of the two; the constructor throws
 * a `TypeError` for neither or both).
 */
export interface PetstoreClientOptions extends TransportOptions, Partial<ClientCredentials> {
  /** `pet_…`, or a test key `pet_test_…` (see `prefer`): sent as `X-API-Key`. */
  apiKey?: string;
  /**
   * With `clientId` (the key's id, `key_…`) and `clientSecret` (the key), OAuth 2.0 client credentials (the service's
   * docs/tokens.md): every request carries an access token (`Authorization: Bearer`) from `POST /oauth/token`, one for
   * all the client's callers, renewed once 30 s before it expires (measured with `now`) and once after the service
   * refused it (`401` `invalid_token`). `scope` asks for fewer scopes than all.
   */
  clientId?: string;
  /** Default: `http://localhost:8080`. */
  baseUrl?: string;
}

export class PetstoreClient {
  readonly #transport: Transport;

  constructor(options: PetstoreClientOptions) {
    const { apiKey, clientId, clientSecret, scope, baseUrl = 'http://localhost:8080', ...transport } = options;
    const credentials =
      apiKey ?? (clientId !== undefined && clientSecret !== undefined ? { clientId, clientSecret, scope } : undefined);
    // For callers without the types: one way in, as the service takes one.
    if (credentials === undefined || (apiKey !== undefined && clientId !== undefined))
      throw new TypeError('PetstoreClient takes apiKey, or clientId and clientSecret: one of them');
    this.#transport = new Transport(baseUrl, credentials, transport);
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
  placeOrder(
    order: NewOrder,
    { idempotencyKey = crypto.randomUUID() }: { idempotencyKey?: string } = {},
  ): Promise<Order> {
    const headers = { 'idempotency-key': idempotencyKey };
    return this.#transport.send({
      operation: 'placeOrder',
      method: 'POST',
      path: '/store/orders',
      body: order,
      headers,
    });
  }

  /** `GET /store/orders/{orderId}` (experimental). */
  getOrder(orderId: OrderId): Promise<Order> {
    return this.#transport.send({ operation: 'getOrder', method: 'GET', path: `/store/orders/${orderId}` });
  }

  /**
   * `POST /store/orders/{orderId}/advance` (experimental), test keys only: moves the order one step now
   * (`placed` → `approved` → `delivered`), as the store's fulfilment does when it falls due. Always sent
   * with an `Idempotency-Key`, so a retry never moves it twice. A live key gets `TestKeyRequiredError`;
   * a delivered or cancelled order, `OrderNotAdvanceableError`.
   */
  advanceOrder(
    orderId: OrderId,
    { idempotencyKey = crypto.randomUUID() }: { idempotencyKey?: string } = {},
  ): Promise<Order> {
    const headers = { 'idempotency-key': idempotencyKey };
    return this.#transport.send({
      operation: 'advanceOrder',
      method: 'POST',
      path: `/store/orders/${orderId}/advance`,
      headers,
    });
  }

  /** `GET /events` (beta): one page of this key's events, newest first. */
  listEvents(query: ListEventsQuery = {}): Promise<EventPage> {
    return this.#transport.send({ operation: 'listEvents', method: 'GET', path: '/events', query });
  }

  /**
   * Every page of `GET /events` (beta), newest first, following `nextCursor` until the last:
   * `for await (const page of client.events({ type: ['order.delivered'] })) …`. Stop early with `break`;
   * a page may be short (or empty) with a filter, and more still follow while its cursor is not null.
   *
   * `events.stream()`: `GET /events/stream` (beta), this key's events as they are written, oldest first, each once,
   * followed across the stream's ends for as long as you iterate: `for await (const event of
   * client.events.stream({ types: ['order.approved'] })) …`. After an end (a drop, a restart) it waits the stream's
   * `retry` (with `sleep`) and resumes with `Last-Event-ID`, the last event's id; `after` resumes after an event of
   * yours from the start. Stop with `break` or `signal`: the connection closes. An opening the service refuses ends
   * it with the error: `EventIdUnknownError` for an id it does not keep, `StreamLimitError` beyond 5 open streams.
   */
  readonly events: {
    (query?: Omit<ListEventsQuery, 'cursor'>): AsyncGenerator<EventPage, void, undefined>;
    stream(options?: StreamEventsOptions): AsyncGenerator<Event, void, undefined>;
  } = Object.assign((query: Omit<ListEventsQuery, 'cursor'> = {}) => this.#eventPages(query), {
    stream: (options: StreamEventsOptions = {}) => streamEvents(this.#transport, options),
  });

  /** `GET /events/{eventId}` (beta): one event of this key's, as a webhook delivery carries it. */
  getEvent(eventId: EventId): Promise<Event> {
    return this.#transport.send({ operation: 'getEvent', method: 'GET', path: `/events/${eventId}` });
  }

  /**
   * `POST /webhook-endpoints` (experimental): your events sent to `url`, signed. The answer carries the
   * signing `secret` this once: keep it, and verify deliveries with `verifyWebhook`. Sent with an
   * `Idempotency-Key` (a new UUID unless you pass one), so a retry never makes a second endpoint.
   */
  createWebhookEndpoint(
    endpoint: NewWebhookEndpoint,
    { idempotencyKey = crypto.randomUUID() }: { idempotencyKey?: string } = {},
  ): Promise<WebhookEndpointWithSecret> {
    const headers = { 'idempotency-key': idempotencyKey };
    return this.#transport.send({
      operation: 'createWebhookEndpoint',
      method: 'POST',
      path: '/webhook-endpoints',
      body: endpoint,
      headers,
    });
  }

  /** `GET /webhook-endpoints` (experimental): one page of your endpoints. */
  listWebhookEndpoints(query: { limit?: number; cursor?: string } = {}): Promise<WebhookEndpointPage> {
    return this.#transport.send({
      operation: 'listWebhookEndpoints',
      method: 'GET',
      path: '/webhook-endpoints',
      query,
    });
  }

  /** `GET /webhook-endpoints/{endpointId}` (experimental). */
  getWebhookEndpoint(endpointId: string): Promise<WebhookEndpoint> {
    return this.#transport.send({
      operation: 'getWebhookEndpoint',
      method: 'GET',
      path: `/webhook-endpoints/${endpointId}`,
    });
  }

  /** `PATCH /webhook-endpoints/{endpointId}` (experimental): `enabled: true` enables it again after it was disabled. */
  updateWebhookEndpoint(endpointId: string, patch: WebhookEndpointPatch): Promise<WebhookEndpoint> {
    return this.#transport.send({
      operation: 'updateWebhookEndpoint',
      method: 'PATCH',
      path: `/webhook-endpoints/${endpointId}`,
      body: patch,
    });
  }

  /** `DELETE /webhook-endpoints/{endpointId}` (experimental): the endpoint and its delivery log. */
  async deleteWebhookEndpoint(endpointId: string): Promise<void> {
    await this.#transport.send({
      operation: 'deleteWebhookEndpoint',
      method: 'DELETE',
      path: `/webhook-endpoints/${endpointId}`,
    });
  }

  /**
   * `POST /webhook-endpoints/{endpointId}/rotate-secret` (experimental):
   * a new secret, this once; the old one signs beside it for 24 hours.
   */
  rotateWebhookSecret(
    endpointId: string,
    { idempotencyKey = crypto.randomUUID() }: { idempotencyKey?: string } = {},
  ): Promise<WebhookEndpointWithSecret> {
    const headers = { 'idempotency-key': idempotencyKey };
    return this.#transport.send({
      operation: 'rotateWebhookSecret',
      method: 'POST',
      path: `/webhook-endpoints/${endpointId}/rotate-secret`,
      headers,
    });
  }

  /**
   * `POST /webhook-endpoints/{endpointId}/test` (experimental): a
   * `webhook.test` event, sent to this endpoint now; answers its delivery.
   */
  testWebhookEndpoint(
    endpointId: string,
    { idempotencyKey = crypto.randomUUID() }: { idempotencyKey?: string } = {},
  ): Promise<WebhookDelivery> {
    const headers = { 'idempotency-key': idempotencyKey };
    return this.#transport.send({
      operation: 'testWebhookEndpoint',
      method: 'POST',
      path: `/webhook-endpoints/${endpointId}/test`,
      headers,
    });
  }

  /**
   * `POST /webhook-endpoints/{endpointId}/exam` (experimental; a test key's endpoint): eight deliveries
   * of a `webhook.test` event sent to the endpoint's URL (valid, duplicate, wrong secret, unsigned,
   * stale, future, tampered, two signatures), and how the receiver answered each; it decides the key's
   * `webhook-receiver` check. Changes nothing of the endpoint; sent with an `Idempotency-Key`, so it may
   * be retried.
   */
  examWebhookEndpoint(
    endpointId: string,
    { idempotencyKey = crypto.randomUUID() }: { idempotencyKey?: string } = {},
  ): Promise<WebhookExam> {
    const headers = { 'idempotency-key': idempotencyKey };
    return this.#transport.send({
      operation: 'examWebhookEndpoint',
      method: 'POST',
      path: `/webhook-endpoints/${endpointId}/exam`,
      headers,
    });
  }

  /** `GET /webhook-endpoints/{endpointId}/deliveries` (experimental): one page of its delivery log, newest first. */
  listWebhookDeliveries(
    endpointId: string,
    query: { limit?: number; cursor?: string } = {},
  ): Promise<WebhookDeliveryPage> {
    return this.#transport.send({
      operation: 'listWebhookDeliveries',
      method: 'GET',
      path: `/webhook-endpoints/${endpointId}/deliveries`,
      query,
    });
  }

  /** `POST /webhook-endpoints/{endpointId}/deliveries/{deliveryId}/retry` (experimental): sends it again now. */
  retryWebhookDelivery(
    endpointId: string,
    deliveryId: string,
    { idempotencyKey = crypto.randomUUID() }: { idempotencyKey?: string } = {},
  ): Promise<WebhookDelivery> {
    const headers = { 'idempotency-key': idempotencyKey };
    return this.#transport.send({
      operation: 'retryWebhookDelivery',
      method: 'POST',
      path: `/webhook-endpoints/${endpointId}/deliveries/${deliveryId}/retry`,
      headers,
    });
  }

  /** `GET /usage` (beta): the plan, both windows, the ban in force and today's count; asking counts nothing. */
  usage(): Promise<Usage> {
    return this.#transport.send({ operation: 'getUsage', method: 'GET', path: '/usage' });
  }

  /**
   * A test key's own clock (experimental; test keys only, a live key gets `TestKeyRequiredError`): its
   * windows, bans and `Retry-After` go by it. `advance({ seconds })` or `advance({ to })` moves it forward
   * as if the time had passed (`ClockCannotGoBackError` for a `to` before its now); `freeze()` stops it,
   * `resume()` starts it again. The moves are sent with an `Idempotency-Key`: a retry never moves it twice.
   * None counts toward the key's limits.
   */
  readonly testClock = {
    get: (): Promise<TestClock> =>
      this.#transport.send({ operation: 'getTestClock', method: 'GET', path: '/test-clock', everyVersion: true }),
    advance: (by: ClockAdvance, options: { idempotencyKey?: string } = {}): Promise<TestClock> =>
      this.#moveClock('advance', options, by),
    freeze: (options: { idempotencyKey?: string } = {}): Promise<TestClock> => this.#moveClock('freeze', options),
    resume: (options: { idempotencyKey?: string } = {}): Promise<TestClock> => this.#moveClock('resume', options),
  };

  /**
   * `DELETE /test-data` (experimental; test keys only): removes everything the key made, clears its
   * windows, ban and ban history, puts its clock back to the real time; answers how many were removed.
   */
  async resetTestData(): Promise<TestDataRemoved> {
    const removed = await this.#transport.send<TestDataRemoved>({
      operation: 'resetTestData',
      method: 'DELETE',
      path: '/test-data',
      everyVersion: true,
    });
    // The key's clock is back to the real time: what was past its sunset in the key's time may answer again.
    this.#transport.forgetGone();
    return removed;
  }

  /**
   * `POST /test-keys` (experimental; test keys only): a child test key of this key's plan and version,
   * with its own clock and data, for one job of a parallel run; `key` is shown this once (a retry with the
   * same `Idempotency-Key`, always sent, shows it again). At most 100 alive (`TestKeyLimitError`).
   */
  createTestKey({ idempotencyKey = crypto.randomUUID() }: { idempotencyKey?: string } = {}): Promise<TestKey> {
    const headers = { 'idempotency-key': idempotencyKey };
    return this.#transport.send({ operation: 'createTestKey', method: 'POST', path: '/test-keys', headers });
  }

  /** `DELETE /test-keys/{keyId}` (experimental): one of this key's children, with everything it made. */
  async deleteTestKey(keyId: string): Promise<void> {
    await this.#transport.send({ operation: 'deleteTestKey', method: 'DELETE', path: `/test-keys/${keyId}` });
  }

  /**
   * `GET /report-card` (experimental; test keys only): how this key's client behaved toward the API,
   * check by check (each `passed`, `failed` with its latest failures, or `untested`; a check's `docs`
   * page gives its rule). Counts nothing toward the key's limits.
   */
  reportCard(): Promise<ReportCard> {
    return this.#transport.send({
      operation: 'getReportCard',
      method: 'GET',
      path: '/report-card',
      everyVersion: true,
    });
  }

  /** `DELETE /report-card` (experimental; test keys only): the key's card starts over now; answers the fresh card. */
  resetReportCard(): Promise<ReportCard> {
    return this.#transport.send({
      operation: 'resetReportCard',
      method: 'DELETE',
      path: '/report-card',
      everyVersion: true,
    });
  }

  async *#eventPages(query: Omit<ListEventsQuery, 'cursor'>): AsyncGenerator<EventPage, void, undefined> {
    let cursor: string | undefined;
    do {
      const page = await this.listEvents({ ...query, cursor });
      yield page;
      cursor = page.nextCursor ?? undefined;
    } while (cursor !== undefined);
  }

  #moveClock(
    how: 'advance' | 'freeze' | 'resume',
    { idempotencyKey = crypto.randomUUID() }: { idempotencyKey?: string },
    body?: ClockAdvance,
  ): Promise<TestClock> {
    const headers = { 'idempotency-key': idempotencyKey };
    return this.#transport.send({
      operation: `${how}TestClock`,
      method: 'POST',
      path: `/test-clock/${how}`,
      headers,
      everyVersion: true,
      ...(body ? { body } : {}),
    });
  }

  /** `DELETE /store/orders/{orderId}` (experimental): cancels; cancelling twice is harmless. */
  cancelOrder(orderId: OrderId): Promise<Order> {
    return this.#transport.send({ operation: 'cancelOrder', method: 'DELETE', path: `/store/orders/${orderId}` });
  }
}
