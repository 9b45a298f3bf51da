import { EVENT_TYPES } from '../events/schemas.js';

/**
 * The Standard Webhooks headers of every delivery, as the document declares them (the spec writes them in lower case).
 */
const DELIVERY_HEADERS = [
  {
    name: 'webhook-id',
    description:
      'The event id (`evt_…`): the same on every attempt of the delivery. Keep the ids you handled, and ignore one ' +
      'you meet again.',
    schema: { type: 'string', maxLength: 27, pattern: '^evt_[0-9a-z]{1,11}[0-9a-f]{12}$' },
  },
  {
    name: 'webhook-timestamp',
    description:
      "Unix seconds of this attempt. Refuse a delivery whose timestamp is far from your clock's (the reference " +
      'libraries allow five minutes).',
    schema: { type: 'string', maxLength: 12, pattern: '^[0-9]+$' },
  },
  {
    name: 'webhook-signature',
    description:
      'Space-separated `v1,<base64>`: the HMAC-SHA256 of `<webhook-id>.<webhook-timestamp>.<body>`, keyed by the ' +
      "bytes of your endpoint's secret (the base64 after `whsec_`); one per secret in force (two for a day after a " +
      'rotation). Accept the delivery when one matches.',
    schema: { type: 'string', maxLength: 400, pattern: '^v1,[A-Za-z0-9+/=]+( v1,[A-Za-z0-9+/=]+)*$' },
  },
];

export const DELIVERY_HEADER_NAMES = DELIVERY_HEADERS.map((header) => header.name);

/**
 * The document's `webhooks` (OpenAPI 3.1): one entry per event type, what the service `POST`s to your
 * endpoint: the event, as `GET /events/{eventId}` shows it, with the Standard Webhooks headers.
 */
export function webhooksSection(): Record<string, unknown> {
  return Object.fromEntries(
    EVENT_TYPES.map((type) => [
      type,
      {
        post: {
          operationId: `${type.replace(/\.(.)/g, (_, c: string) => c.toUpperCase())}Webhook`,
          summary: `The ${type} event, sent to your endpoint`,
          description:
            type === 'webhook.test'
              ? 'Sent to one endpoint when you ask (`POST /webhook-endpoints/{endpointId}/test`); `data` names it.'
              : `Sent to every endpoint of yours subscribed to \`${type}\` when one of your orders enters its ` +
                `state; \`data\` is the order as of the event.`,
          tags: ['Webhooks'],
          security: [],
          parameters: DELIVERY_HEADERS.map((header) => ({ in: 'header', required: true, ...header })),
          requestBody: {
            required: true,
            content: {
              'application/json': {
                schema: {
                  allOf: [
                    { $ref: '#/components/schemas/Event' },
                    { type: 'object', properties: { type: { const: type } } },
                  ],
                },
              },
            },
          },
          responses: {
            '200': { description: 'Received: any `2xx` within the timeout is a success.' },
            '410': {
              description:
                'Gone: the endpoint is disabled at once; nothing more is sent to it until you enable it again.',
            },
            '429': { description: "Too many: retried on the schedule, no sooner than the answer's `Retry-After`." },
            '503': { description: "Unavailable: retried on the schedule, no sooner than the answer's `Retry-After`." },
            default: { description: 'Anything else, a redirect included, or no answer: retried on the schedule.' },
          },
        },
      },
    ]),
  );
}
