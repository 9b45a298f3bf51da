import {
  CACHE_CONTROL_HEADER,
  conflictResponse,
  NO_STORE,
  NO_STORE_HEADER,
  problemResponses,
} from '../http/responses.js';
import { ref } from '../http/schemas.js';
import type { App } from '../http/types.js';
import { IdempotencyHeaders, idempotencyKeyOf, markReplayed, REPLAYED_RESPONSE_HEADER } from '../idempotency/header.js';
import { fingerprintOf } from '../idempotency/writes.js';
import { keyOf, ownerOf } from '../keys/identify.js';
import { TAG } from '../http/tags.js';
import { checkDestination, type WebhookDeps } from './deps.js';
import { EndpointWithSecret, MAX_ENDPOINTS_PER_KEY, NewEndpoint } from './schemas.js';

/** `POST /webhook-endpoints` (createWebhookEndpoint): a new endpoint, with its signing secret shown this once. */
export function createWebhookEndpoint(app: App, { webhooks }: { webhooks: WebhookDeps }): void {
  const { endpoints, writes, clock, policy } = webhooks;
  app.post(
    '/webhook-endpoints',
    {
      schema: {
        operationId: 'createWebhookEndpoint',
        summary: 'Create a webhook endpoint',
        description:
          `Your events (every type, or those in \`events\`) are sent to \`url\`, signed with the secret answered ` +
          `here, this once (Standard Webhooks: verify \`webhook-signature\` with it). At most ` +
          `${MAX_ENDPOINTS_PER_KEY} endpoints a key. Send an \`Idempotency-Key\` to make a retry safe.`,
        tags: [TAG.webhooks],
        'x-stability': 'experimental',
        headers: IdempotencyHeaders,
        body: ref(NewEndpoint),
        response: {
          201: {
            ...ref(EndpointWithSecret),
            description: 'The endpoint, and its signing secret: keep it now.',
            headers: { ...REPLAYED_RESPONSE_HEADER, ...NO_STORE_HEADER },
          },
          ...problemResponses(400, 413, 415, 422),
          ...conflictResponse('webhook-endpoint-limit', 'idempotency-key-in-progress'),
        },
      },
    },
    async (request, reply) => {
      const key = keyOf(request);
      await checkDestination(request.body.url, policy);
      const made = await writes.run(
        ownerOf(request),
        idempotencyKeyOf(request.headers),
        () => fingerprintOf('createWebhookEndpoint', request.body),
        async (trx) => ({
          status: 201,
          body: await endpoints.withStore(trx).create(key.id, !key.test, request.body, clock()),
        }),
      );
      markReplayed(reply, made);
      return reply.code(201).header(CACHE_CONTROL_HEADER, NO_STORE).send(made.body);
    },
  );
}
