import Type, { type Static } from 'typebox';
import { Int64Id, ListQuery, StringEnum } from '../http/schemas.js';
import { IDEMPOTENCY_WINDOW_IN_WORDS } from './idempotency-window.js';

export const ORDER_STATUSES = ['placed', 'approved', 'delivered', 'cancelled'] as const;

export const Order = Type.Object(
  {
    id: Int64Id('The order id.'),
    petId: Int64Id('The pet ordered.'),
    quantity: Type.Integer({ format: 'int32', minimum: 1, maximum: 1000 }),
    shipDate: Type.String({ format: 'date-time', maxLength: 30 }),
    status: StringEnum(ORDER_STATUSES),
    complete: Type.Boolean({ description: 'True once the order is delivered.' }),
  },
  { $id: 'Order', additionalProperties: false, description: 'An order placed by the API key that reads it.' },
);
export type Order = Static<typeof Order>;

export const NewOrder = Type.Object(
  {
    petId: Int64Id('The pet to order; it must be `available`.'),
    quantity: Type.Optional(Type.Integer({ format: 'int32', minimum: 1, maximum: 1000, default: 1 })),
    shipDate: Type.Optional(
      Type.String({
        format: 'date-time',
        maxLength: 35,
        description:
          'RFC 3339, with its offset; kept as the same instant in UTC, to the millisecond. A leap second (`:60`) and an instant outside the years 0000–9999 in UTC are refused. Defaults to two days after the order is placed.',
      }),
    ),
  },
  { $id: 'NewOrder', additionalProperties: false, description: 'An order to place.' },
);
export type NewOrder = Static<typeof NewOrder>;

export const OrderParams = Type.Object({ orderId: Int64Id('The id of one of your orders.') });

export const OrderListQuery = ListQuery(ORDER_STATUSES, 'orders');

/** The header's name as documented (CORS lists it so); Node hands it over in lower case, as the schema names it. */
export const IDEMPOTENCY_KEY_HEADER_NAME = 'Idempotency-Key';
export const IDEMPOTENCY_KEY_HEADER = IDEMPOTENCY_KEY_HEADER_NAME.toLowerCase() as Lowercase<typeof IDEMPOTENCY_KEY_HEADER_NAME>;
/** Set on the answer to a replayed request. */
export const IDEMPOTENT_REPLAYED_HEADER = 'Idempotent-Replayed';

export const PlaceOrderHeaders = Type.Object({
  [IDEMPOTENCY_KEY_HEADER]: Type.Optional(
    Type.String({
      maxLength: 512,
      // A bare token of visible characters, or a Structured Field string (`"…"`, `\\` and `\"` escaped);
      // either way the key has 1 to 255 characters.
      pattern: '^(?:[\\x21\\x23-\\x7E][\\x21-\\x7E]{0,254}|"(?:[\\x20\\x21\\x23-\\x5B\\x5D-\\x7E]|\\\\[\\\\"]){1,255}")$',
      description: `Makes the request safe to retry: the same key and body within ${IDEMPOTENCY_WINDOW_IN_WORDS} get the original response; the same key with another body gets \`422\`; a retry while the original is still being processed gets \`409\`. A bare token (\`8e03…\`) or, as in draft-ietf-httpapi-idempotency-key-header, a Structured Field string (\`"8e03…"\`): the same key either way.`,
    }),
  ),
});

/** The key an `Idempotency-Key` header names (the schema has checked its form): a string's content, or the token itself. */
export function idempotencyKeyOf(header: string): string {
  return header.startsWith('"') ? header.slice(1, -1).replace(/\\(["\\])/g, '$1') : header;
}
