import type { FastifyRequest } from 'fastify';
import { problemResponses } from '../http/responses.js';
import { ref } from '../http/schemas.js';
import type { App } from '../http/types.js';
import { keyNow, REAL_TIME } from '../clock.js';
import { TAG } from '../http/tags.js';
import { TEST_MODE_ABOUT, TEST_MODE_CONFIG, testKeyOf } from '../test-mode/get-clock.js';
import type { KeyRecord } from '../keys/repository.js';
import type { Cards } from './cards.js';
import { cardStart } from './card.js';
import { ReportCard } from './schemas.js';
import { cardView, failedRequests, type Logged } from './view.js';

export interface ReportCardDeps {
  cards: Cards;
  publicUrl: string;
  /** Which failures' exchanges the request log still holds (request-log/): their `log` links. */
  logged: Logged;
}

const ABOUT =
  `Every request of a test key to an API operation is graded on what a good client does with the answers it gets ` +
  `(README, "Is my client a good API citizen?"): each check is \`untested\` until its situation arises, \`failed\` ` +
  `once it went wrong, else \`passed\`. Each check's \`docs\` page gives its rule and a sketch of a good client. ` +
  `${TEST_MODE_ABOUT}`;

/** The card of a request's key: its own, or a new one from the key's creation. */
async function cardOf(request: FastifyRequest, cards: Cards) {
  const key = testKeyOf(request);
  return cards.read(key.id, cardStart(key));
}

/**
 * What a test key's reset of its data (`DELETE /test-data`, test-mode/reset.ts) tells its card: the card keeps
 * what it graded; the situations go with the windows and records that opened them.
 */
export function cardReset(cards: Cards): (key: KeyRecord) => void | Promise<void> {
  return async (key) => void (await cards.record(key.id, cardStart(key), { kind: 'reset' }));
}

/** `GET /report-card` (getReportCard): how the test key's client behaved. */
export function getReportCard(app: App, { cards, publicUrl, logged }: ReportCardDeps): void {
  app.get(
    '/report-card',
    {
      config: TEST_MODE_CONFIG,
      schema: {
        operationId: 'getReportCard',
        summary: "Your test key's report card",
        description: ABOUT,
        tags: [TAG.testing],
        'x-stability': 'experimental',
        response: { 200: ref(ReportCard), ...problemResponses(403, 429) },
      },
    },
    async (request) => {
      const card = await cardOf(request, cards);
      return cardView(card, publicUrl, await logged(testKeyOf(request).id, failedRequests(card)));
    },
  );
}

/** `DELETE /report-card` (resetReportCard): the card starts over now. */
export function resetReportCard(
  app: App,
  { cards, publicUrl, clock }: Omit<ReportCardDeps, 'logged'> & { clock: () => number },
): void {
  app.delete(
    '/report-card',
    {
      config: TEST_MODE_CONFIG,
      schema: {
        operationId: 'resetReportCard',
        summary: "Start your test key's report card over",
        description:
          `Every check back to \`untested\`, the counts to 0, \`since\` your key's now; answers the fresh card. ` +
          `${ABOUT}`,
        tags: [TAG.testing],
        'x-stability': 'experimental',
        response: { 200: ref(ReportCard), ...problemResponses(403, 429) },
      },
    },
    async (request) => {
      const key = testKeyOf(request);
      return cardView(await cards.clear(key.id, keyNow(request.identity.clock ?? REAL_TIME, clock())), publicUrl);
    },
  );
}
