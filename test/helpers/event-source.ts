import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { type ErrorEvent, EventSource, type FetchLike } from 'eventsource';
import { EVENT_TYPES } from '../../src/events/schemas.js';
import type { Server } from './process.js';

/**
 * `GET /events/stream` followed by a WHATWG client, the `eventsource` package, as a user's program would: it waits
 * the stream's `retry` after each end and resumes with `Last-Event-ID` by itself. Its custom fetch adds the key and
 * chooses the instance of each connection, and notes what each connection did, for a test to judge.
 */

/** One request of the client for the stream, as its fetch saw it. */
export interface Connection {
  server: Server;
  /** The `Last-Event-ID` the client sent; null on its first. */
  lastEventId: string | null;
  /** The id of the last event the client had received when it sent this one. */
  lastReceived: string | null;
  /** Real times (performance.now()): the request sent; its body's end as the client read it. */
  sentAt: number;
  endedAt?: number;
  status?: number;
  /**
   * `clean`: the body ended as an HTTP answer ends; `error`: the request or the connection failed; `closed`: the
   * test closed the client on it.
   */
  ending?: 'clean' | 'error' | 'closed';
  /** Events received on it. */
  events: number;
}

export interface Received {
  /** The frame's `id` (the `lastEventId` the client dispatched it with), its `event`, its data's own id and type. */
  id: string;
  event: string;
  dataId: string;
  dataType: string;
}

export interface Follower {
  received: Received[];
  connections: Connection[];
  /** The `error` events the client fired (one at each end, before it waits `retry`; one when it gives up). */
  errors: { code: number | undefined; message: string | undefined }[];
  /** The connection the client is on, or had last. */
  current(): Connection | undefined;
  /** Whether it is on a stream now: one answered 200, not ended. */
  readonly open: boolean;
  describe(): string;
  close(): void;
}

export interface FollowOptions {
  /** The instance of the n-th connection (from 0). */
  route: (n: number) => Server;
  /** A `Prefer` header on each connection (`fault=drop; events=100`). */
  prefer?: string;
  /** Each connection's `X-Request-Id`: `${requestIds}-${n}`. */
  requestIds?: string;
}

/** An EventSource following `key`'s events, each of its connections to the instance `route` names. */
export function follow(key: string, { route, prefer, requestIds }: FollowOptions): Follower {
  const received: Received[] = [];
  const connections: Connection[] = [];
  const errors: Follower['errors'] = [];
  const routed: FetchLike = async (input, init) => {
    const n = connections.length;
    const server = route(n);
    const asked = new URL(input);
    const connection: Connection = {
      server,
      lastEventId: init.headers['Last-Event-ID'] ?? null,
      lastReceived: received.at(-1)?.id ?? null,
      sentAt: performance.now(),
      events: 0,
    };
    connections.push(connection);
    const ended = (how: NonNullable<Connection['ending']>) => {
      connection.endedAt ??= performance.now();
      connection.ending ??= how;
    };
    let response: Response;
    try {
      response = await fetch(`${server.url}${asked.pathname}${asked.search}`, {
        ...init,
        headers: {
          ...init.headers,
          'X-API-Key': key,
          ...(prefer ? { Prefer: prefer } : {}),
          ...(requestIds ? { 'X-Request-Id': `${requestIds}-${n}` } : {}),
        },
      });
    } catch (error) {
      ended('error');
      throw error;
    }
    connection.status = response.status;
    if (!response.body) return response;
    // The body passed on as it comes, its end noted as the client reads it.
    const reader = response.body.getReader();
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        try {
          const { done, value } = await reader.read();
          if (!done) return controller.enqueue(value);
          ended('clean');
          controller.close();
        } catch (error) {
          ended('error');
          controller.error(error);
        }
      },
      cancel: (reason) => reader.cancel(reason),
    });
    const { status, headers, url, redirected } = response;
    return { status, headers, url, redirected, body };
  };
  const source = new EventSource(`${route(0).url}/events/stream`, { fetch: routed });
  const onEvent = (message: MessageEvent<string>) => {
    const data = JSON.parse(message.data) as { id: string; type: string };
    received.push({ id: message.lastEventId, event: message.type, dataId: data.id, dataType: data.type });
    connections.at(-1)!.events++;
  };
  for (const type of [...EVENT_TYPES, 'message']) source.addEventListener(type, onEvent);
  source.addEventListener('error', (error: ErrorEvent) => errors.push({ code: error.code, message: error.message }));
  const current = () => connections.at(-1);
  return {
    received,
    connections,
    errors,
    current,
    get open() {
      const now = current();
      return source.readyState === source.OPEN && now?.status === 200 && now.endedAt === undefined;
    },
    describe: () =>
      `received ${received.length} events; readyState ${source.readyState}; connections: ` +
      JSON.stringify(
        connections.map((c) => ({ to: c.server.url, status: c.status, events: c.events, ending: c.ending })),
      ) +
      `; errors: ${JSON.stringify(errors)}`,
    close() {
      const now = current();
      if (now && now.endedAt === undefined) {
        now.endedAt = performance.now();
        now.ending = 'closed';
      }
      source.close();
    },
  };
}

/** Each reconnection's wait after the end of the connection before it, in ms. */
export function waits(connections: readonly Connection[]): number[] {
  return connections.slice(1).map((connection, i) => Math.round(connection.sentAt - connections[i]!.endedAt!));
}

/** Polls `ready` every 20 ms; fails after `ms`, saying what was awaited and `state()`. */
export async function until(what: string, ready: () => boolean, ms: number, state: () => string): Promise<void> {
  const deadline = performance.now() + ms;
  while (!ready()) {
    if (performance.now() > deadline) throw new Error(`${what}: not within ${ms} ms; ${state()}`);
    await sleep(20);
  }
}
