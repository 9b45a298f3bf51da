import Type, { type Static } from 'typebox';
import { Int64Id, ListQuery, StringEnum } from '../http/schemas.js';
import { ORDER_STATUSES } from './lifecycle.js';

export const Order = Type.Object(
  {
    id: Int64Id('The order id.'),
    petId: Int64Id('The pet ordered.'),
    quantity: Type.Integer({ format: 'int32', minimum: 1, maximum: 1000 }),
    shipDate: Type.String({ format: 'date-time', maxLength: 30 }),
    status: StringEnum(ORDER_STATUSES, {
      description:
        'Where the order is: `placed`, then `approved`, then `delivered`; `placed` or `approved` orders can be ' +
        '`cancelled`. The store moves orders by itself (see the API description); a test key can move its own at ' +
        'once with `advance`.',
    }),
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
          'RFC 3339, with its offset; kept as the same instant in UTC, to the millisecond. A leap second (`:60`) ' +
          'and an instant outside the years 0000–9999 in UTC are refused. Defaults to two days after the order is ' +
          'placed. An estimate: the order moves on its own schedule, not on this date.',
      }),
    ),
  },
  { $id: 'NewOrder', additionalProperties: false, description: 'An order to place.' },
);
export type NewOrder = Static<typeof NewOrder>;

export const OrderParams = Type.Object({ orderId: Int64Id('The id of one of your orders.') });

export const OrderListQuery = ListQuery(ORDER_STATUSES, 'orders');
