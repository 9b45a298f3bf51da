import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { FastifyReply, FastifyRequest } from 'fastify';
import Type from 'typebox';
import { LAST_EVENT_ID_HEADER, parseEventId, resumedAfter } from '../events/ids.js';
import type { EventsRepository } from '../events/repository.js';
import { EventListQuery } from '../events/schemas.js';
import { ProblemError } from '../http/problems.js';
import { CACHE_CONTROL_HEADER, conflictResponse, NO_STORE, problemResponses } from '../http/responses.js';
import { TAG } from '../http/tags.js';
import type { App } from '../http/types.js';
import { keyOf } from '../keys/identify.js';
import { cardStart } from '../report-card/card.js';
import type { EventStreams } from './hub.js';
import { HEARTBEAT_MS } from './hub.js';
import type { StreamSeats } from './seats.js';
import { EventStream, RETRY_MS } from './stream.js';

export const EVENT_STREAM_CONTENT_TYPE = 'text/event-stream';

declare module 'fastify' {
  interface FastifyRequest {
    /** The event stream a request opened, once it answers with it. */
    eventStream: EventStream | undefined;
  }
}

const StreamQuery = Type.Object({
  type: EventListQuery.properties.type,
  after: Type.Optional(
    Type.String({
      maxLength: 64,
      description:
        'Resume after this event (`evt_…`): the events written after it first, then live. `Last-Event-ID` takes ' +
        'its place when both are sent.',
      example: 'evt_1a96fa337c6a71',
    }),
  ),
});

const StreamHeaders = Type.Object({
  [LAST_EVENT_ID_HEADER]: Type.Optional(
    Type.String({
      maxLength: 64,
      description:
        'The id of the last event your client received: the stream resumes after it, with no event missed or ' +
        'repeated. A WHATWG `EventSource` sends it by itself when it reconnects.',
    }),
  ),
});

export interface StreamRouteDeps {
  events: EventsRepository;
  hub: EventStreams;
  seats: StreamSeats;
  streamsPerKey: number;
}

/** `GET /events/stream` (streamEvents): the caller's events as Server-Sent Events (docs/orders-and-events.md). */
export function streamEvents(app: App, { events, hub, seats, streamsPerKey }: StreamRouteDeps): void {
  app.get(
    '/events/stream',
    {
      config: { stream: true },
      schema: {
        operationId: 'streamEvents',
        summary: 'Follow your events as a stream',
        description:
          'Your events as Server-Sent Events (WHATWG HTML), as `GET /events` would list them, oldest first: first ' +
          `\`retry: ${RETRY_MS}\`, then each event written from now on as \`id\`, \`event\` (its type) and ` +
          '`data` (the event JSON, in your version), and a comment line at least every ' +
          `${HEARTBEAT_MS / 1000} s while nothing happens. Send \`${LAST_EVENT_ID_HEADER}\` (or \`after\`) to ` +
          'resume: the events written after that one come first, then live, none missed or repeated, whichever ' +
          'instance answers; an id the service does not keep is a `400` `event-id-unknown`. Opening a stream is one ' +
          `request of your key; a key holds at most ${streamsPerKey} open streams (a \`409\` \`stream-limit\` ` +
          'beyond). The service may end a stream (a restart, a revoked key, a client that does not read): ' +
          `reconnect after \`retry\` with the last id you received. Test keys: \`Prefer: fault=drop\` ends the ` +
          'stream after its next event (`fault=drop; events=100`: after its 100th), as a proxy cutting it would.' +
          '\n\nThe interactive docs offer no "Try it out" here, whose answer never ends: their Events panel follows ' +
          'the stream of the key you authorized with.',
        tags: [TAG.events],
        'x-stability': 'beta',
        'x-hideTryItPanel': true,
        querystring: StreamQuery,
        headers: StreamHeaders,
        response: {
          200: {
            description: 'The stream: `retry`, then events as they are written, and comments to keep it alive.',
            headers: {
              [CACHE_CONTROL_HEADER]: { type: 'string', const: NO_STORE, description: '`no-store`.' },
            },
            content: {
              [EVENT_STREAM_CONTENT_TYPE]: {
                schema: {
                  type: 'string',
                  description:
                    'Server-Sent Events. Each event: `id: evt_…`, `event: <type>`, `data: <Event JSON>` ' +
                    '(`#/components/schemas/Event`), then a blank line.',
                  example:
                    `retry: ${RETRY_MS}\n\nid: evt_1a96fa337c6a71\nevent: order.approved\n` +
                    'data: {"id":"evt_1a96fa337c6a71","type":"order.approved","timestamp":"2026-11-29T10:00:00.000Z",' +
                    '"livemode":false,"apiVersion":"2026-11-01","data":{"id":1,"petId":1,"quantity":1,' +
                    '"shipDate":"2026-12-01T00:00:00.000Z","status":"approved","complete":false}}\n\n',
                },
              },
            },
          },
          ...problemResponses(400),
          ...conflictResponse('stream-limit'),
        },
      },
    },
    async (request, reply) => {
      const key = keyOf(request);
      const after = await resumePoint(request, events, key.id);
      // A HEAD is told what a GET would open, and opens nothing: no stream would be read.
      if (request.method === 'HEAD') return streamHeaders(reply).send('');
      const id = randomUUID();
      const { type } = request.query;
      const stream = new EventStream(
        {
          id,
          owner: key.id,
          version: request.apiVersion,
          types: type?.length ? new Set(type) : null,
          after,
          dropAfter: request.fault?.fault === 'drop' ? (request.fault.dropAfter ?? 1) : null,
          transcript: key.test,
          graded: key.test ? { requestId: request.id, since: cardStart(key) } : null,
        },
        performance.now(),
      );
      await hub.place(stream);
      if (!(await seats.take(key.id, id, streamsPerKey)))
        throw new ProblemError(
          'stream-limit',
          `Your key already holds ${streamsPerKey} open event streams: close one before opening another.`,
        );
      request.eventStream = stream;
      // The seat is the stream's from here: given back when it closes, however it ends.
      const opened = hub.open(stream);
      streamHeaders(reply);
      // A failed read ends the stream; the client resumes from the last id it received.
      opened.catch((error: unknown) => {
        request.log.warn({ err: error }, 'event stream: it could not be caught up');
        stream.body.destroy();
      });
      // Fastify sends a stream as it is (its serialiser is for bodies built whole).
      return reply.send(stream.body as unknown as string);
    },
  );
}

/** A stream's headers: no cache and no proxy buffer may hold it, and its connection ends with it. */
function streamHeaders(reply: FastifyReply): FastifyReply {
  return (
    reply
      .header('content-type', `${EVENT_STREAM_CONTENT_TYPE}; charset=utf-8`)
      .header('cache-control', NO_STORE)
      .header('x-accel-buffering', 'no')
      // Nothing follows a stream on its connection, and a stop then waits for no idle socket.
      .header('connection', 'close')
  );
}

/** Where the stream resumes: after the event `Last-Event-ID` (or `after`) names, which must be one the key has. */
async function resumePoint(request: FastifyRequest, events: EventsRepository, owner: string) {
  const id = resumedAfter(request.headers, request.query);
  if (id === undefined) return null;
  const named = parseEventId(id);
  if (!named || !(await events.find(owner, id)))
    throw new ProblemError(
      'event-id-unknown',
      `You have no event ${JSON.stringify(id.slice(0, 64))} to resume after: it is not an id of yours, or it is ` +
        'past the retention period. Open the stream without it, and catch up with GET /events.',
    );
  return { seq: named.seq, id };
}
