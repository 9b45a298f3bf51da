import { randomUUID } from 'node:crypto';

/**
 * An event's id: `evt_`, its place in the order of writing (`seq`, base 36), then a nonce of 12 hex
 * digits drawn when it was written. The id names its row (no index of ids is needed to find it), and
 * the nonce makes it one that no other store issues (a receiver that sets webhook ids aside for
 * deduplication never mistakes one store's event for another's). Opaque to clients.
 */
export const EVENT_ID_PATTERN = '^evt_[0-9a-z]{1,11}[0-9a-f]{12}$';
const NONCE_LENGTH = 12;
const PREFIX = 'evt_';

/** A nonce for a new event; `randomUUID` draws on a pool of entropy instead of asking the system each time. */
export function newNonce(): string {
  const uuid = randomUUID();
  return `${uuid.slice(0, 8)}${uuid.slice(24, 28)}`;
}

export function eventIdOf(seq: number, nonce: string): string {
  return `${PREFIX}${seq.toString(36)}${nonce}`;
}

const ID = new RegExp(EVENT_ID_PATTERN);

/** The row an id names; undefined for a text that is not an event id. */
export function parseEventId(id: string): { seq: number; nonce: string } | undefined {
  if (!ID.test(id)) return undefined;
  const seq = parseInt(id.slice(PREFIX.length, -NONCE_LENGTH), 36);
  return Number.isSafeInteger(seq) && seq > 0 ? { seq, nonce: id.slice(-NONCE_LENGTH) } : undefined;
}

/** Where a client names the last event it received, as WHATWG's `EventSource` sends it when it reconnects. */
export const LAST_EVENT_ID_HEADER = 'Last-Event-ID';
const LAST_EVENT_ID_FIELD = LAST_EVENT_ID_HEADER.toLowerCase();

/**
 * The event a stream's opening resumes after, as its request names it: `Last-Event-ID`, else `?after=`; undefined for
 * none. Whether it is one the key has is the stream's to say (event-stream/route.ts).
 */
export function resumedAfter(headers: Record<string, unknown>, query: unknown): string | undefined {
  const sent = headers[LAST_EVENT_ID_FIELD];
  if (typeof sent === 'string' && sent !== '') return sent;
  const after = (query as { after?: unknown } | undefined)?.after;
  return typeof after === 'string' ? after : undefined;
}
