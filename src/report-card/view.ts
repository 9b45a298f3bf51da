import { CHECK_IDS, CHECKS } from './checks.js';
import { type Card, statusOf } from './card.js';
import type { ReportCard } from './schemas.js';

/** Where a check's page is. */
export const checkPageUrl = (publicUrl: string, id: string) => `${publicUrl}/checks/${id}`;

/** A card as `GET /report-card` answers it. */
export function cardView(card: Card, publicUrl: string): ReportCard {
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
        failures: failures.map(({ requestId, at, detail }) => ({ requestId, at: new Date(at).toISOString(), detail })),
        advice: CHECKS[id].advice,
        docs: checkPageUrl(publicUrl, id),
      };
    }),
  };
}
