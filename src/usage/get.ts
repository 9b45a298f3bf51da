import { COUNTS_NOTHING } from '../http/stages.js';
import { keyOf } from '../keys/identify.js';
import { problemResponses } from '../http/responses.js';
import { ref } from '../http/schemas.js';
import type { App } from '../http/types.js';
import { TAG } from '../http/tags.js';
import { keyCaller } from '../ratelimit/callers.js';
import type { LimiterStore } from '../ratelimit/store.js';
import type { WindowStatus } from '../ratelimit/verdict.js';
import { Usage } from './schemas.js';

/** The common problems as this operation meets them (its description says when). */
function usageProblems() {
  const common = problemResponses(429, 503);
  return {
    429: {
      ...common[429],
      description: 'Throttled, as every path that counts nothing (`uncounted-throttled`, per key); never by your plan.',
    },
    503: {
      ...common[503],
      description: 'The store of keys cannot be reached: the key cannot be checked. Retry after `Retry-After`.',
    },
  };
}

/**
 * `GET /usage` (getUsage): the caller's plan, both windows, the ban in force and today's count, as
 * GitHub's `GET /rate_limit` answers them. It counts nothing (like the documentation's paths, it is
 * only throttled, per key) and carries the rate-limit headers; its numbers are those of the
 * headers, from the same look at the limiter (the limit stage's, ratelimit/stage.ts).
 */
export function getUsage(app: App, { limiter }: { limiter: LimiterStore }): void {
  app.get(
    '/usage',
    {
      config: COUNTS_NOTHING,
      schema: {
        operationId: 'getUsage',
        summary: 'Your usage',
        description: [
          'Your plan, each window (its limit, what is used and left, when the next slot frees, when it resets), ' +
            "the ban in force and today's count. Asking counts nothing: it does not use up the quota it reports, as " +
            "GitHub's `GET /rate_limit`.",
          '',
          '- **A banned key** gets `200`, its ban in `ban` (asking neither counts nor extends it), and the headers ' +
            'show the ban.',
          "- **`429`** comes only from the throttle of the paths that count nothing, your key's own " +
            "(`uncounted-throttled`: 600 a minute, 100,000 a day), never from your plan's limits, and never a ban.",
          "- **A test key's `Prefer: fault=…`** does not apply: faults apply to the operations that count " +
            '(`Preference-Applied` is never sent here).',
          '- **`503`** (with `Retry-After`) when the store of keys cannot be reached and the key cannot be ' +
            'checked: at once for a key not held in memory, within a second for one held in memory. `500` only when ' +
            'the service fails in a way it did not foresee.',
        ].join('\n'),
        tags: [TAG.usage],
        'x-stability': 'beta',
        response: { 200: ref(Usage), ...usageProblems() },
      },
    },
    async (request): Promise<Usage> => {
      const key = keyOf(request);
      const verdict = request.rateLimit;
      const ban = await limiter.banOf(keyCaller(key.id), key.unbanSeq, request.identity.clock);
      const window = (status: WindowStatus) => ({
        limit: status.limit,
        used: status.limit - status.remaining,
        remaining: status.remaining,
        nextSlotAt: new Date(verdict.at + status.nextAdmitInMs).toISOString(),
        resetsAt: new Date(status.resetAt).toISOString(),
      });
      const day = window(verdict.day);
      return {
        plan: key.plan,
        windows: { minute: window(verdict.minute), day },
        ban: ban && { until: new Date(ban.until).toISOString(), level: ban.level },
        today: day.used,
      };
    },
  );
}
