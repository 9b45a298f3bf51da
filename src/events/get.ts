import { ProblemError } from '../http/problems.js';
import { problemResponses } from '../http/responses.js';
import { ref } from '../http/schemas.js';
import type { App } from '../http/types.js';
import { keyOf } from '../keys/identify.js';
import { TAG } from '../http/tags.js';
import type { EventsRepository } from './repository.js';
import { Event, EventParams, eventIn } from './schemas.js';

/** `GET /events/{eventId}` (getEvent): one event of the caller's. */
export function getEvent(app: App, { events }: { events: EventsRepository }): void {
  app.get(
    '/events/:eventId',
    {
      schema: {
        operationId: 'getEvent',
        summary: 'Get one of your events',
        description:
          "One event of yours, as a webhook delivery carries it. Another key's event is not found (`404`), never " +
          'forbidden.',
        tags: [TAG.events],
        'x-stability': 'beta',
        params: EventParams,
        response: { 200: ref(Event), ...problemResponses(400, 404) },
      },
    },
    async (request) => {
      const event = await events.find(keyOf(request).id, request.params.eventId);
      if (!event) throw new ProblemError('not-found', `You have no event ${request.params.eventId}.`);
      return eventIn(event, request.apiVersion);
    },
  );
}
