import { keyOf } from '../keys/identify.js';
import { problemResponses } from '../http/responses.js';
import { ref } from '../http/schemas.js';
import type { App } from '../http/types.js';
import { TAG } from '../openapi/tags.js';
import { keyCaller } from '../ratelimit/callers.js';
import type { LimiterStore } from '../ratelimit/store.js';
import type { WindowStatus } from '../ratelimit/verdict.js';
import { Usage } from './schemas.js';

/**
 * `GET /usage` (getUsage): the caller's plan, both windows, the ban in force and today's count, as
 * GitHub's `GET /rate_limit` answers them. It counts nothing (like the documentation's paths, it is
 * only throttled per address) and carries the rate-limit headers; its numbers are those of the
 * headers, from the same look at the limiter (the limit step's, http/ratelimit.ts).
 */
export function getUsage(app: App, { limiter }: { limiter: LimiterStore }): void {
  app.get(
    '/usage',
    {
      schema: {
        operationId: 'getUsage',
        summary: 'Your usage',
        description:
          "Your plan, each window (its limit, what is used and left, when the next slot frees, when it resets), the ban in force and today's count. Asking counts nothing: it does not use up the quota it reports, as GitHub's `GET /rate_limit`.",
        tags: [TAG.usage],
        'x-stability': 'beta',
        response: { 200: ref(Usage), ...problemResponses() },
      },
    },
    async (request): Promise<Usage> => {
      const key = keyOf(request);
      const verdict = request.rateLimit;
      const ban = await limiter.banOf(keyCaller(key.id), key.unbanSeq);
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
