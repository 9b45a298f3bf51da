import { describe, expect, it } from 'vitest';
import { type Answer, type Arrival, newCard } from '../../src/report-card/card.js';
import { grade } from '../../src/report-card/grade.js';

/**
 * A card has a fixed size whatever the key sends (docs/testing-clients.md#is-my-client-a-good-api-citizen): counts, 10
 * failures a check, bounded situations.
 */

function seeded(seed: number): () => number {
  let s = seed;
  return () => {
    s = (s * 1_103_515_245 + 12_345) % 2_147_483_648;
    return s / 2_147_483_648;
  };
}

describe('a card’s size', () => {
  it('stays under a bound however many and however varied the requests: 1,000 or 100,000 of every kind', () => {
    const sizes = [1_000, 100_000].map((n) => {
      const random = seeded(n);
      const card = newCard(0);
      let now = 0;
      for (let i = 0; i < n; i++) {
        now += Math.floor(random() * 3_000);
        const pick = <T>(list: readonly T[]) => list[Math.floor(random() * list.length)]!;
        const url = `/pets/${Math.floor(random() * 1e9)}?cursor=${'x'.repeat(Math.floor(random() * 50))}`;
        const request: Arrival = {
          requestId: `request-${i}-${'r'.repeat(100)}`,
          conn: (i % 7) + 1,
          openedAt: now,
          real: now,
          key: now,
          method: pick(['GET', 'POST', 'DELETE']),
          path: url.slice(0, 100),
          target: `t${Math.floor(random() * 1e6)}`,
          body: pick(['', 'b1', 'b2']),
          operation: pick(['GET /pets/{petId}', 'POST /store/orders']),
          version: pick(['2025-06-01', '2026-11-26']),
          pinned: pick(['known', 'unknown', 'none'] as const),
          idempotencyKey: pick([null, 'k1', `k${i}`]),
          ifNoneMatch: random() < 0.5,
          cursor: random() < 0.3,
          asksToken: random() < 0.1,
          token: pick([null, 't1', `t${i}`]),
        };
        const answer: Answer = {
          real: now + 1,
          key: now + 1,
          status: pick([200, 304, 400, 410, 429, 500, 503, 'reset', 'cut'] as const),
          ...(random() < 0.3 ? { retryAfter: Math.ceil(random() * 60) } : {}),
          ...(random() < 0.2 ? { slotFreeAt: now + 60_000 } : {}),
          ...(random() < 0.1 ? { tokenIssued: 3600 } : {}),
          ...(random() < 0.1 ? { tokenExpired: true } : {}),
          etag: random() < 0.5,
          ...(random() < 0.01 ? { banStarted: 60 } : {}),
          ...(random() < 0.05 ? { gone: random() < 0.5 ? { operation: `GET /x/${i}` } : { version: `v${i}` } } : {}),
          cursorRefused: random() < 0.1,
          conn: (i % 5) + 1,
          mark: 7,
        };
        grade(card, request, answer);
      }
      expect(card.requests).toBe(n);
      return JSON.stringify(card).length;
    });
    // A hundred times the requests adds only digits (of the counts, the request ids, the figures).
    expect(sizes[1]!).toBeLessThan(24_000);
    expect(sizes[1]! / sizes[0]!).toBeLessThan(1.2);
  });
});
