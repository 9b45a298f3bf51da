/**
 * How an order moves (docs/orders-and-events.md): `placed` → `approved` → `delivered`, and `placed` or `approved` →
 * `cancelled`. Nothing else moves it. The store's `complete` (and version 2025-06-01's) is true
 * exactly when it is `delivered`. Pure: the fulfilment, `advance` and `DELETE` ask it what a move is;
 * the store only records the answer.
 */
export const ORDER_STATUSES = ['placed', 'approved', 'delivered', 'cancelled'] as const;
export type OrderStatus = (typeof ORDER_STATUSES)[number];

/** The event each state is entered with (events/). */
export const ORDER_EVENT_TYPES = ['order.placed', 'order.approved', 'order.delivered', 'order.cancelled'] as const;
export type OrderEventType = (typeof ORDER_EVENT_TYPES)[number];

export function eventTypeOf(status: OrderStatus): OrderEventType {
  return `order.${status}`;
}

/** The state an order entered with this event. */
export function statusEnteredBy(type: OrderEventType): OrderStatus {
  return type.slice('order.'.length) as OrderStatus;
}

/**
 * The simulated fulfilment's delays: approval after placing, delivery after approval; null: never by itself
 * (FULFILMENT_APPROVE_SECONDS, FULFILMENT_DELIVER_SECONDS).
 */
export interface FulfilmentDelays {
  approveMs: number | null;
  deliverMs: number | null;
}

/** The step fulfilment (and a test key's `advance`) takes from a state; none from the two final ones. */
const NEXT: Readonly<Partial<Record<OrderStatus, OrderStatus>>> = { placed: 'approved', approved: 'delivered' };

export function nextStatus(status: OrderStatus): OrderStatus | undefined {
  return NEXT[status];
}

export function isCancellable(status: OrderStatus): boolean {
  return status === 'placed' || status === 'approved';
}

export function isComplete(status: OrderStatus): boolean {
  return status === 'delivered';
}

/**
 * When an order that enters `status` at `now` falls due for its next move by itself, or null when it
 * never does (a final state, or a delay configured as never). The delays in force when the order
 * enters the state decide: a change of configuration applies to the moves scheduled after it.
 */
export function dueAfterEntering(status: OrderStatus, now: number, delays: FulfilmentDelays): number | null {
  const delay = status === 'placed' ? delays.approveMs : status === 'approved' ? delays.deliverMs : null;
  return delay === null ? null : now + delay;
}
