/**
 * `GET /events/stream` (streamEvents) as `client.events.stream()`, an async iterable of events: opened through the
 * client's transport (its key or token, gate, retries), read as Server-Sent Events (./sse.ts), and resumed after every
 * end of the stream as the service asks (docs/orders-and-events.md in the service's repository): after the stream's
 * `retry`, with `Last-Event-ID` the last event's id.
 */
import { PetstoreError } from './errors.js';
import type { components, operations } from './generated/schema.js';
import { follow } from './sse.js';
import type { Transport } from './transport.js';

type Event = components['schemas']['Event'];
type StreamQuery = NonNullable<operations['streamEvents']['parameters']['query']>;

export interface StreamEventsOptions {
  /** Only events of these types; default: every type. */
  types?: StreamQuery['type'];
  /**
   * Resume after this event (`evt_…`, the `id` of the last event you handled): the events written after it first,
   * then live. Default: the events written from now on.
   */
  after?: string;
  /** Stops the iteration and closes the stream: the loop ends, without an error. `break` does the same. */
  signal?: AbortSignal;
}

/**
 * The key's events as they are written, oldest first, each once, for as long as the caller iterates. When the
 * service ends the stream (a drop, a restart, a client too slow to read) or its connection is lost, the next one opens
 * after the stream's `retry` (the client's `sleep`), resuming after the last event received. An opening is sent as any
 * request of the client: it waits out a `429`'s `Retry-After`, retries a `503` or a lost connection with backoff, and
 * throws what it gives up on, which ends the iteration: `EventIdUnknownError` for an `after` (or last event) the
 * service does not keep, `StreamLimitError` for a sixth open stream of the key.
 */
export async function* streamEvents(
  transport: Transport,
  { types, after, signal }: StreamEventsOptions = {},
): AsyncGenerator<Event, void, undefined> {
  const messages = follow({
    lastEventId: after,
    signal,
    sleep: (ms) => transport.sleep(ms),
    open: async (lastEventId, signal) => {
      const response = await transport.open({
        operation: 'streamEvents',
        method: 'GET',
        path: '/events/stream',
        query: { type: types },
        headers: lastEventId === undefined ? {} : { 'last-event-id': lastEventId },
        accept: 'text/event-stream',
        signal,
      });
      if (response.body && response.headers.get('content-type')?.startsWith('text/event-stream')) return response.body;
      await response.body?.cancel();
      const requestId = response.headers.get('x-request-id') ?? undefined;
      throw new PetstoreError(`streamEvents: the answer (HTTP ${response.status}) is not an event stream`, {
        status: response.status,
        requestId,
      });
    },
  });
  for await (const message of messages) yield JSON.parse(message.data) as Event;
}
