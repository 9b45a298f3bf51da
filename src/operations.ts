import { type ApiDeps, declareCommonContract, operationParts } from './api-operations.js';
import { getEvent } from './events/get.js';
import { listEvents } from './events/list.js';
import { streamEvents } from './event-stream/route.js';
import type { App } from './http/types.js';
import { advanceOrder } from './orders/advance.js';
import { cancelOrder } from './orders/cancel.js';
import { getOrder } from './orders/get.js';
import { listOrders } from './orders/list.js';
import { placeOrder } from './orders/place.js';
import { getPet } from './pets/get.js';
import { listPets } from './pets/list.js';
import { examWebhookEndpoint } from './report-card/exam.js';
import { cardReset, getReportCard, resetReportCard } from './report-card/routes.js';
import { countedOperations, scriptRoutes } from './scenarios/routes.js';
import { getTestClock } from './test-mode/get-clock.js';
import { advanceTestClock, freezeTestClock, resumeTestClock } from './test-mode/move-clock.js';
import { resetTestData } from './test-mode/reset.js';
import { createTestKey, deleteTestKey } from './test-mode/test-keys.js';
import { getUsage } from './usage/get.js';
import type { Scope } from './oauth/scopes.js';
import { tokenRoute } from './oauth/token-route.js';
import { requestLogRoutes } from './request-log/routes.js';
import { createWebhookEndpoint } from './webhooks/create.js';
import { deleteWebhookEndpoint } from './webhooks/delete.js';
import { listWebhookDeliveries } from './webhooks/deliveries-list.js';
import { getWebhookEndpoint } from './webhooks/get.js';
import { listWebhookEndpoints } from './webhooks/list.js';
import { retryWebhookDelivery } from './webhooks/retry.js';
import { rotateWebhookSecret } from './webhooks/rotate.js';
import { testWebhookEndpoint } from './webhooks/test.js';
import { updateWebhookEndpoint } from './webhooks/update.js';

/**
 * The API's operations, in the order they are registered, which is their order in the OpenAPI document, each
 * handed what it uses of what ./api-operations.ts built. Each has its key required and the common problems
 * declared. Adding an operation is adding its file and a line here.
 */
export async function apiOperations(api: App, deps: ApiDeps): Promise<void> {
  // The scope a token needs for the operations registered within `needing` (oauth/scopes.ts).
  let scope: Scope | undefined;
  const needing = (needed: Scope, register: () => void) => {
    scope = needed;
    register();
    scope = undefined;
  };
  api.addHook('onRoute', (route) => {
    if (scope !== undefined) route.config = { ...(route.config as object), scope };
    declareCommonContract(route);
  });
  // The operations a scenario's step may match: those that count, gathered as they are registered.
  const counted = countedOperations(api);
  const parts = await operationParts(deps);
  const { db, clock, publicUrl, limiter, cards, orderPages, pets, catalogue, clocks, keys, deprecation } = parts;
  const { shapes, writes, moves, placement, events, cursors, testData, testKeySecret, webhooks } = parts;
  const { scripts, scenarioSteps, tokens, tokenTtlSeconds, requestLog, streams, seats, streamsPerKey } = parts;
  // A graceful stop ends the streams first: their clients see a clean end, and resume on another instance.
  api.addHook('preClose', () => streams.close());
  needing('pets:read', () => {
    listPets(api, { pets, cursors });
    getPet(api, { catalogue, clock, deprecation, shapes });
  });
  needing('orders:read', () => listOrders(api, { db, orderPages, cursors }));
  needing('orders:write', () => placeOrder(api, { placement, publicUrl }));
  needing('orders:read', () => getOrder(api, { db }));
  needing('orders:write', () => {
    cancelOrder(api, { db, moves, clock });
    advanceOrder(api, { writes, moves, clock });
  });
  needing('orders:read', () => {
    listEvents(api, { events, cursors });
    streamEvents(api, { events, hub: streams, seats, streamsPerKey });
    getEvent(api, { events });
  });
  needing('webhooks:write', () => {
    createWebhookEndpoint(api, { webhooks });
    listWebhookEndpoints(api, { webhooks, cursors });
    getWebhookEndpoint(api, { webhooks });
    updateWebhookEndpoint(api, { webhooks });
    deleteWebhookEndpoint(api, { webhooks });
    rotateWebhookSecret(api, { webhooks });
    testWebhookEndpoint(api, { webhooks });
    examWebhookEndpoint(api, { webhooks, cards });
    listWebhookDeliveries(api, { webhooks, cursors });
    retryWebhookDelivery(api, { webhooks });
  });
  getUsage(api, { limiter });
  tokenRoute(api, { tokens, ttlSeconds: tokenTtlSeconds });
  getTestClock(api, { clock });
  advanceTestClock(api, { clocks, writes, clock, db, moves });
  freezeTestClock(api, { clocks, writes, clock, db, moves });
  resumeTestClock(api, { clocks, writes, clock, db, moves });
  resetTestData(api, { testData, afterReset: cardReset(cards) });
  createTestKey(api, { db, keys, writes, testKeySecret });
  deleteTestKey(api, { db, testData });
  scriptRoutes(api, { scripts, keys, operations: counted, scenarios: scenarioSteps });
  getReportCard(api, { cards, publicUrl, logged: (keyId, ids) => requestLog.kept(keyId, ids) });
  requestLogRoutes(api, { log: requestLog, cursors, publicUrl });
  resetReportCard(api, { cards, publicUrl, clock });
}
