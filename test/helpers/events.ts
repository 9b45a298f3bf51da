import { expect } from 'vitest';
import { json, type TestApp } from './app.js';
import type { Order, Page } from './orders.js';

export interface Event {
  id: string;
  type: string;
  timestamp: string;
  livemode: boolean;
  data: Order;
}

/** One page of `GET /events` as `key` reads it (`query` without the leading `?`). */
export async function eventPage(t: TestApp, key: string, query = ''): Promise<Page<Event>> {
  const response = await t.request({ url: `/events${query ? `?${query}` : ''}`, headers: { 'x-api-key': key } });
  expect(response.statusCode, response.body).toBe(200);
  return json<Page<Event>>(response);
}

/** Every event of the key, newest first, walking the pages. */
export async function eventsOf(t: TestApp, key: string, query = 'limit=100'): Promise<Event[]> {
  const events: Event[] = [];
  let cursor: string | null = null;
  for (let pages = 0; pages < 1_000; pages++) {
    const page: Page<Event> = await eventPage(t, key, cursor === null ? query : `${query}&cursor=${cursor}`);
    events.push(...page.data);
    cursor = page.nextCursor;
    if (cursor === null) return events;
  }
  throw new Error('the pages never ended');
}
