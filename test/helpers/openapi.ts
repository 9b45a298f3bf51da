/** The served OpenAPI document as test/openapi/document*.test.ts walk it: its operations, and the names they expect. */

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the served document, walked freely by the assertions.
export type Json = any;
export interface Operation {
  method: string;
  path: string;
  op: Json;
}

export const EXPECTED_OPERATIONS = [
  'GET /pets',
  'GET /pets/{petId}',
  'GET /store/orders',
  'POST /store/orders',
  'GET /store/orders/{orderId}',
  'DELETE /store/orders/{orderId}',
  'POST /store/orders/{orderId}/advance',
  'GET /events',
  'GET /events/stream',
  'GET /events/{eventId}',
  'POST /webhook-endpoints',
  'GET /webhook-endpoints',
  'GET /webhook-endpoints/{endpointId}',
  'PATCH /webhook-endpoints/{endpointId}',
  'DELETE /webhook-endpoints/{endpointId}',
  'POST /webhook-endpoints/{endpointId}/rotate-secret',
  'POST /webhook-endpoints/{endpointId}/test',
  'POST /webhook-endpoints/{endpointId}/exam',
  'GET /webhook-endpoints/{endpointId}/deliveries',
  'POST /webhook-endpoints/{endpointId}/deliveries/{deliveryId}/retry',
  'GET /usage',
  'POST /oauth/token',
  'GET /versions',
  'GET /test-clock',
  'POST /test-clock/advance',
  'POST /test-clock/freeze',
  'POST /test-clock/resume',
  'DELETE /test-data',
  'POST /test-keys',
  'DELETE /test-keys/{keyId}',
  'PUT /test-scenario',
  'GET /test-scenario',
  'DELETE /test-scenario',
  'GET /scenarios',
  'GET /report-card',
  'DELETE /report-card',
  'GET /request-log',
  'GET /request-log.har',
  'GET /request-log/{requestId}',
  'GET /.well-known/oauth-authorization-server',
  'GET /.well-known/jwks.json',
];
const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];
export const RATE_LIMIT_HEADERS = [
  'X-RateLimit-Limit',
  'X-RateLimit-Remaining',
  'X-RateLimit-Reset',
  'RateLimit-Policy',
  'RateLimit',
];

export function operationsOf(document: Json): Operation[] {
  return Object.entries(document.paths as Record<string, Json>).flatMap(([path, item]) =>
    Object.entries(item as Record<string, Json>)
      .filter(([method]) => HTTP_METHODS.includes(method))
      .map(([method, op]) => ({ method: method.toUpperCase(), path, op })),
  );
}
