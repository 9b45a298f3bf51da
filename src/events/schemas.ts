import Type, { type Static } from 'typebox';
import { Int64Id, PageQuery, ref, StringEnum } from '../http/schemas.js';
import { ORDER_EVENT_TYPES } from '../orders/lifecycle.js';
import { Order } from '../orders/schemas.js';
import { VERSION_PATTERN } from '../versions/versions.js';
import { EVENT_ID_PATTERN } from './ids.js';

/** Every type of event: an order's moves, and the test a webhook endpoint asks for. */
export const EVENT_TYPES = [...ORDER_EVENT_TYPES, 'webhook.test'] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** What `webhook.test` carries: the endpoint it was sent to. */
export const WebhookTestData = Type.Object(
  { endpointId: Type.String({ maxLength: 27, description: 'The endpoint that asked for it.' }) },
  { $id: 'WebhookTestData', additionalProperties: false, description: 'The data of a `webhook.test` event.' },
);

export const Event = Type.Object(
  {
    id: Type.String({
      pattern: EVENT_ID_PATTERN,
      maxLength: 27,
      description: 'The event id, `evt_…`; webhook deliveries carry it as `webhook-id`.',
    }),
    type: StringEnum(EVENT_TYPES, { description: 'What happened: the order entered the state the type names.' }),
    timestamp: Type.String({ format: 'date-time', maxLength: 30, description: 'When it happened (RFC 3339, UTC).' }),
    livemode: Type.Boolean({ description: "False for a test key's event." }),
    apiVersion: Type.String({
      pattern: VERSION_PATTERN,
      maxLength: 10,
      description:
        'The version of the API that shaped this event: the request’s for `GET /events`, the key’s pinned version ' +
        'for a webhook delivery.',
    }),
    data: Type.Union([ref(Order), ref(WebhookTestData)], {
      description: 'The order as of the event; for `webhook.test`, the endpoint tested.',
    }),
  },
  {
    $id: 'Event',
    additionalProperties: false,
    description:
      'Something that happened to one of your orders (`data`: the order as of the event), or a test a webhook ' +
      'endpoint asked for. Events are kept for the retention period, then deleted.',
  },
);
export type Event = Static<typeof Event>;
/** An event as the store keeps it: the version that shapes it is its reader's (versions/). */
export type StoredEvent = Omit<Event, 'apiVersion'>;

/**
 * An event in a version's words, its members in the schema's order: the newest shape (older ones: versions/shape.ts).
 */
export function eventIn({ id, type, timestamp, livemode, data }: StoredEvent, apiVersion: string): Event {
  return { id, type, timestamp, livemode, apiVersion, data };
}

export const EventParams = Type.Object({
  eventId: Type.String({
    pattern: EVENT_ID_PATTERN,
    maxLength: 27,
    description: 'The id of one of your events, `evt_…`.',
    example: 'evt_1a96fa337c6a71',
  }),
});

export const EventListQuery = Type.Object({
  type: Type.Optional(
    Type.Array(StringEnum(EVENT_TYPES), {
      maxItems: EVENT_TYPES.length,
      description:
        'Only events of this type; repeat the parameter for several (`?type=order.approved&type=order.delivered`).',
    }),
  ),
  orderId: Type.Optional(Int64Id('Only the events of this order.')),
  ...PageQuery.properties,
});
