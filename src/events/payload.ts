import { Order } from '../orders/schemas.js';
import { Shapes } from '../versions/shape.js';
import { Event, eventIn, type StoredEvent, WebhookTestData } from './schemas.js';

/** Where the records of an event are, to shape it in an older version (versions/shape.ts). */
const PAYLOADS = new Shapes([Event, Order, WebhookTestData]);

/** An event's JSON as `GET /events/{eventId}` shows it in `apiVersion`: a webhook's body, a stream's `data`. */
export function eventJson(event: StoredEvent, apiVersion: string): string {
  const payload = eventIn(event, apiVersion);
  const shape = PAYLOADS.record('Event', apiVersion);
  return JSON.stringify(shape ? shape(payload) : payload);
}
