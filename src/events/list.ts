import { type Cursors, scopeOf } from '../http/pagination.js';
import { problemResponses } from '../http/responses.js';
import { Page, ref } from '../http/schemas.js';
import type { App } from '../http/types.js';
import { keyOf } from '../keys/identify.js';
import { TAG } from '../http/tags.js';
import { type EventsRepository, WALK_LIMIT } from './repository.js';
import { Event, EventListQuery, eventIn } from './schemas.js';

/** `GET /events` (listEvents): a page of the caller's events, newest first. */
export function listEvents(app: App, { events, cursors }: { events: EventsRepository; cursors: Cursors }): void {
  app.get(
    '/events',
    {
      schema: {
        operationId: 'listEvents',
        summary: 'List your events',
        description:
          'Every move of your orders, newest first, optionally only some types or one order. Paginate with ' +
          '`cursor`: a page never skips or repeats an event, however many arrive while you read. To catch up, read ' +
          'from the first page down to the newest event you already have: for one key, events appear in the order ' +
          'they were written, so none is missed. ' +
          `With \`type\`, a page looks through at most ${WALK_LIMIT.toLocaleString('en')} events and may hold ` +
          `fewer than \`limit\`: go on while \`nextCursor\` is not null.`,
        tags: [TAG.events],
        'x-stability': 'beta',
        querystring: EventListQuery,
        response: { 200: Page(ref(Event), 'A page of your events, newest first.'), ...problemResponses(400) },
      },
    },
    async (request) => {
      const { type, orderId } = request.query;
      const { id } = keyOf(request);
      const scope = scopeOf('events', id, { type, orderId });
      const page = await events.list(id, { types: type, orderId }, cursors.pageRequest(request.query, scope));
      return {
        data: page.events.map((event) => eventIn(event, request.apiVersion)),
        nextCursor: page.next === null ? null : cursors.encode(page.next, scope),
      };
    },
  );
}
