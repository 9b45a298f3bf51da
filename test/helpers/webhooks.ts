import { Webhook } from 'standardwebhooks';
import { expect, vi } from 'vitest';
import { json, type TestApp } from './app.js';
import { firstPetWith, type Order, ordersAs } from './orders.js';
import type { Received } from './receiver.js';

export interface EndpointWithSecret {
  id: string;
  url: string;
  secret: string;
  enabled: boolean;
  disabledReason: string | null;
  events: string[] | null;
}

export interface Delivery {
  id: string;
  eventId: string;
  type: string;
  state: 'pending' | 'succeeded' | 'failed';
  attempts: Array<{ at: string; status?: number; error?: string; ms: number }>;
  nextAttemptAt: string | null;
}

/** The webhook requests of one key. */
export const webhooksAs = (t: TestApp, key: string) => {
  const headers = { 'x-api-key': key };
  return {
    create: (payload: object, extra: Record<string, string> = {}) =>
      t.request({ method: 'POST', url: '/webhook-endpoints', headers: { ...headers, ...extra }, payload }),
    get: (url: string) => t.request({ url, headers }),
    patch: (id: string, payload: object) =>
      t.request({ method: 'PATCH', url: `/webhook-endpoints/${id}`, headers, payload }),
    del: (id: string) => t.request({ method: 'DELETE', url: `/webhook-endpoints/${id}`, headers }),
    post: (url: string, extra: Record<string, string> = {}) =>
      t.request({ method: 'POST', url, headers: { ...headers, ...extra } }),
  };
};

/** A new endpoint of `key` at `url`, with its secret. */
export async function endpointAt(t: TestApp, key: string, url: string, events?: string[]): Promise<EndpointWithSecret> {
  const response = await webhooksAs(t, key).create({ url, ...(events ? { events } : {}) });
  expect(response.statusCode, response.body).toBe(201);
  return json<EndpointWithSecret>(response);
}

/** An order placed with `key`: its `order.placed` event. */
export async function placeOrder(t: TestApp, key: string): Promise<Order> {
  const response = await ordersAs(t, key).post({ petId: await firstPetWith(t, key, 'available'), quantity: 1 });
  expect(response.statusCode).toBe(201);
  return json<Order>(response);
}

/**
 * What the reference library of the specification (`standardwebhooks`) makes of a delivery, with the
 * given secret: its payload, or the error it throws. Its clock is set to the delivery's own timestamp
 * (it refuses one more than five minutes from its clock, and the tests' clock is a fake one).
 */
export function verifiedByReference(secret: string, delivery: Received): unknown {
  vi.useFakeTimers({ toFake: ['Date'], now: Number(delivery.headers['webhook-timestamp']) * 1000 });
  try {
    return new Webhook(secret).verify(delivery.body, delivery.headers as Record<string, string>);
  } finally {
    vi.useRealTimers();
  }
}
