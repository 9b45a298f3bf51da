import { CHECK_IDS, CHECKS } from './checks.js';
import { type Card, statusOf } from './card.js';
import type { ReportCard } from './schemas.js';

/** Where a check's page is. */
export const checkPageUrl = (publicUrl: string, id: string) => `${publicUrl}/checks/${id}`;

/** Which of these requests of a key still have an entry in its request log (request-log/). */
export type Logged = (keyId: string, requestIds: readonly string[]) => Promise<ReadonlySet<string>>;

/** The ids of the requests a card's failures name. */
export const failedRequests = (card: Card): string[] =>
  CHECK_IDS.flatMap((id) => card.tallies[id].failures.map((failure) => failure.requestId));

/** A card as `GET /report-card` answers it; `logged`, the failures whose exchange the request log still holds. */
export function cardView(card: Card, publicUrl: string, logged: ReadonlySet<string> = new Set()): ReportCard {
  return {
    since: new Date(card.since).toISOString(),
    requests: card.requests,
    checks: CHECK_IDS.map((id) => {
      const { seen, failed, failures } = card.tallies[id];
      return {
        id,
        title: CHECKS[id].title,
        status: statusOf(card, id),
        seen,
        failed,
        failures: failures.map(({ requestId, at, detail }) => ({
          requestId,
          at: new Date(at).toISOString(),
          detail,
          log: logged.has(requestId) ? `${publicUrl}/request-log/${encodeURIComponent(requestId)}` : null,
        })),
        advice: CHECKS[id].advice,
        docs: checkPageUrl(publicUrl, id),
      };
    }),
  };
}
