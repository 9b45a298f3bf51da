import type { Cursors } from './http/pagination.js';
import type { Clock } from './clock.js';
import type { ChangeFeed } from './db/change-feed.js';
import type { Db } from './db/database.js';
import { getEvent } from './events/get.js';
import { listEvents } from './events/list.js';
import type { EventsRepository } from './events/repository.js';
import type { App } from './http/types.js';
import type { IdempotentWrites } from './idempotency/writes.js';
import { advanceOrder } from './orders/advance.js';
import { cancelOrder } from './orders/cancel.js';
import { getOrder } from './orders/get.js';
import { listOrders } from './orders/list.js';
import type { OrderPages } from './orders/order-pages.js';
import type { OrderMoves } from './orders/moves.js';
import { placeOrder } from './orders/place.js';
import type { OrderPlacement } from './orders/placement.js';
import type { Deprecation } from './deprecation/notices.js';
import { getPet } from './pets/get.js';
import { listPets } from './pets/list.js';
import type { TestClocks } from './test-mode/clocks.js';
import { resetTestData } from './test-mode/reset.js';
import type { TestData } from './test-mode/test-data.js';
import { createTestKey, deleteTestKey } from './test-mode/test-keys.js';
import { getTestClock } from './test-mode/get-clock.js';
import { advanceTestClock, freezeTestClock, resumeTestClock } from './test-mode/move-clock.js';
import type { KeysRepository } from './keys/repository.js';
import type { Cards } from './report-card/cards.js';
import { getReportCard, resetReportCard } from './report-card/routes.js';
import { getUsage } from './usage/get.js';
import type { PetCache } from './pets/pet-cache.js';
import type { Shapes } from './versions/shape.js';
import type { PetsRepository } from './pets/repository.js';
import type { LimiterStore } from './ratelimit/store.js';
import { createWebhookEndpoint } from './webhooks/create.js';
import { deleteWebhookEndpoint } from './webhooks/delete.js';
import { listWebhookDeliveries } from './webhooks/deliveries-list.js';
import type { WebhookDeps } from './webhooks/deps.js';
import { getWebhookEndpoint } from './webhooks/get.js';
import { listWebhookEndpoints } from './webhooks/list.js';
import { retryWebhookDelivery } from './webhooks/retry.js';
import { rotateWebhookSecret } from './webhooks/rotate.js';
import { testWebhookEndpoint } from './webhooks/test.js';
import { examWebhookEndpoint } from './report-card/exam.js';
import { updateWebhookEndpoint } from './webhooks/update.js';

/** What the operations are built from; each takes the part it needs. */
export interface OperationDeps {
  db: Db;
  /** Told of every write to a row memory may hold (db/change-feed.ts). */
  changes: ChangeFeed;
  /** The pages of `GET /store/orders` answered from memory. */
  orderPages: OrderPages;
  pets: PetsRepository;
  catalogue: PetCache;
  clock: Clock;
  publicUrl: string;
  /** The deprecation of `GET /pets/{petId}`. */
  deprecation: Deprecation;
  limiter: LimiterStore;
  /** The writes that honour `Idempotency-Key`. */
  writes: IdempotentWrites;
  /** Every change of an order's state, with its event. */
  moves: OrderMoves;
  placement: OrderPlacement;
  events: EventsRepository;
  webhooks: WebhookDeps;
  /** The signed cursors of collections. */
  cursors: Cursors;
  /** Test keys' clocks (test-mode/). */
  clocks: TestClocks;
  /** The keys' records (a test key's reset restarts its fault sequence; its children are keys). */
  keys: KeysRepository;
  /** What a test key made, and how it starts over. */
  testData: TestData;
  /** The secret a child test key's key is derived with (test-mode/test-keys.ts). */
  testKeySecret: Buffer;
  /** Test keys' report cards (report-card/). */
  cards: Cards;
  /** How an older version's records are shaped (versions/shape.ts). */
  shapes: Shapes;
}

/** One operation of the API, in its own file: registers its route, schema and handler together. */
export type Operation = (app: App, deps: OperationDeps) => void;

/**
 * The API's operations, in the order they are registered, which is their order in the OpenAPI
 * document. Adding an operation is adding its file and a line here.
 */
export const OPERATIONS: readonly Operation[] = [
  listPets,
  getPet,
  listOrders,
  placeOrder,
  getOrder,
  cancelOrder,
  advanceOrder,
  listEvents,
  getEvent,
  createWebhookEndpoint,
  listWebhookEndpoints,
  getWebhookEndpoint,
  updateWebhookEndpoint,
  deleteWebhookEndpoint,
  rotateWebhookSecret,
  testWebhookEndpoint,
  examWebhookEndpoint,
  listWebhookDeliveries,
  retryWebhookDelivery,
  getUsage,
  getTestClock,
  advanceTestClock,
  freezeTestClock,
  resumeTestClock,
  resetTestData,
  createTestKey,
  deleteTestKey,
  getReportCard,
  resetReportCard,
];
