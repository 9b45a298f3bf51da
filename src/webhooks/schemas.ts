import Type, { type Static } from 'typebox';
import { EVENT_TYPES } from '../events/schemas.js';
import { StringEnum } from '../http/schemas.js';

/** The most endpoints one key may have. */
export const MAX_ENDPOINTS_PER_KEY = 10;

export const ENDPOINT_ID_PATTERN = '^we_[0-9a-f]{24}$';
export const DELIVERY_ID_PATTERN = '^dlv_[0-9a-z]{1,11}$';

const Url = Type.String({
  format: 'uri',
  maxLength: 2048,
  description:
    'Where deliveries are sent: an `http` or `https` URL (in production not one that reaches a private, loopback ' +
    'or link-local address).',
});
const Description = Type.String({
  maxLength: 500,
  pattern: '^[^\\u0000-\\u001f\\u007f]*$',
  description: 'A note to recognise the endpoint by.',
});
const Subscribed = Type.Array(StringEnum(EVENT_TYPES), {
  minItems: 1,
  maxItems: EVENT_TYPES.length,
  uniqueItems: true,
  description: 'The event types sent to it; leave out for every type.',
});

export const Endpoint = Type.Object(
  {
    id: Type.String({ pattern: ENDPOINT_ID_PATTERN, maxLength: 27 }),
    url: Url,
    description: Description,
    events: Type.Union([Subscribed, Type.Null()], { description: 'The event types sent to it; `null`: every type.' }),
    enabled: Type.Boolean({
      description:
        'False once disabled (by a `410` from it, by too many failed deliveries in a row, or by you); `PATCH` ' +
        'enables it again.',
    }),
    disabledReason: Type.Union([StringEnum(['gone', 'failing', 'by-request']), Type.Null()], {
      description:
        '`gone`: it answered `410`; `failing`: its last deliveries all failed; `by-request`: you disabled it.',
    }),
    secretHint: Type.String({
      maxLength: 20,
      description: 'The first characters of the signing secret in force, which is shown whole only when made.',
    }),
    createdAt: Type.String({ format: 'date-time', maxLength: 30 }),
  },
  {
    $id: 'WebhookEndpoint',
    additionalProperties: false,
    description: 'Where your events are sent, signed (Standard Webhooks).',
  },
);
export type Endpoint = Static<typeof Endpoint>;

/** An endpoint with its whole signing secret: answered only when the secret is made (creation, rotation). */
export const EndpointWithSecret = Type.Object(
  {
    ...Endpoint.properties,
    secret: Type.String({
      pattern: '^whsec_[A-Za-z0-9+/]{43}=$',
      maxLength: 50,
      description: 'The signing secret, `whsec_` and the base64 of 32 bytes: keep it now, it is not shown again.',
    }),
  },
  {
    $id: 'WebhookEndpointWithSecret',
    additionalProperties: false,
    description: 'A webhook endpoint and, this once, its signing secret.',
  },
);

export const NewEndpoint = Type.Object(
  { url: Url, events: Type.Optional(Subscribed), description: Type.Optional(Description) },
  { $id: 'NewWebhookEndpoint', additionalProperties: false, description: 'A webhook endpoint to create.' },
);
export type NewEndpoint = Static<typeof NewEndpoint>;

export const EndpointPatch = Type.Object(
  {
    url: Type.Optional(Url),
    events: Type.Optional(Type.Union([Subscribed, Type.Null()])),
    description: Type.Optional(Description),
    enabled: Type.Optional(Type.Boolean()),
  },
  {
    $id: 'WebhookEndpointPatch',
    additionalProperties: false,
    minProperties: 1,
    description: 'The members of an endpoint to change.',
  },
);
export type EndpointPatch = Static<typeof EndpointPatch>;

export const Attempt = Type.Object(
  {
    at: Type.String({ format: 'date-time', maxLength: 30, description: 'When it was sent.' }),
    status: Type.Optional(
      Type.Integer({
        format: 'int32',
        minimum: 100,
        maximum: 599,
        description: 'The HTTP status the endpoint answered.',
      }),
    ),
    error: Type.Optional(
      Type.String({
        maxLength: 200,
        description: 'Why there was no answer: a timeout, a refused connection, a refused destination.',
      }),
    ),
    ms: Type.Integer({ format: 'int32', minimum: 0, maximum: 3_600_000, description: 'How long it took.' }),
  },
  { additionalProperties: false },
);
export type Attempt = Static<typeof Attempt>;

export const Delivery = Type.Object(
  {
    id: Type.String({ pattern: DELIVERY_ID_PATTERN, maxLength: 15 }),
    eventId: Type.String({ maxLength: 27, description: 'The event sent; every attempt carries it as `webhook-id`.' }),
    type: StringEnum(EVENT_TYPES),
    state: StringEnum(['pending', 'succeeded', 'failed'], {
      description: '`pending` until an attempt succeeds or the last one fails.',
    }),
    attempts: Type.Array(Attempt, { maxItems: 100 }),
    nextAttemptAt: Type.Union([Type.String({ format: 'date-time', maxLength: 30 }), Type.Null()], {
      description: 'When the next attempt is due; `null` once it is done.',
    }),
  },
  {
    $id: 'WebhookDelivery',
    additionalProperties: false,
    description: 'One event sent to one endpoint, with every attempt.',
  },
);
export type Delivery = Static<typeof Delivery>;

export const EndpointParams = Type.Object({
  endpointId: Type.String({
    pattern: ENDPOINT_ID_PATTERN,
    maxLength: 27,
    description: 'The id of one of your endpoints.',
    example: 'we_0123456789abcdef01234567',
  }),
});
export const DeliveryParams = Type.Object({
  ...EndpointParams.properties,
  deliveryId: Type.String({
    pattern: DELIVERY_ID_PATTERN,
    maxLength: 15,
    description: 'The id of one of its deliveries.',
    example: 'dlv_1',
  }),
});
