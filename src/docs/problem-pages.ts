import { COUNTS_NOTHING } from '../http/stages.js';
import Type from 'typebox';
import { ProblemError } from '../http/problems.js';
import { PROBLEM_SLUGS, PROBLEM_TYPES, type ProblemSlug, problemDescription } from '../http/problem-types.js';
import { IDEMPOTENCY_WINDOW_IN_WORDS } from '../idempotency/window.js';
import type { App } from '../http/types.js';
import { MAX_ENDPOINTS_PER_KEY } from '../webhooks/schemas.js';
import type { BanRules } from '../ratelimit/decision.js';
import { bansInWords, uncountedInWords } from '../ratelimit/ban-prose.js';
import { UNCOUNTED_POLICY } from '../ratelimit/plans.js';
import { htmlPage, inlineCode } from '../http/html-page.js';

/** `/problems/<slug>`: what each problem type means, for the person reading a problem's `type`. */
export function problemPages(app: App, rules: BanRules): void {
  app.get(
    '/problems/:slug',
    { config: COUNTS_NOTHING, schema: { hide: true, params: Type.Object({ slug: Type.String() }) } },
    async (request, reply) => {
      const slug = request.params.slug as ProblemSlug;
      if (!PROBLEM_SLUGS.includes(slug))
        throw new ProblemError('not-found', `There is no problem type ${request.params.slug}.`);
      const { status, title } = PROBLEM_TYPES[slug];
      const facts = {
        bans: bansInWords(rules),
        idempotencyWindow: IDEMPOTENCY_WINDOW_IN_WORDS,
        maxWebhookEndpoints: MAX_ENDPOINTS_PER_KEY,
        uncounted: uncountedInWords(UNCOUNTED_POLICY),
      };
      const description = inlineCode(problemDescription(slug, facts));
      const body = `<p>HTTP status <strong>${status}</strong>. Problem type <code>${slug}</code>.</p>\n<p>${description}</p>`;
      return reply.type('text/html; charset=utf-8').send(htmlPage(title, body));
    },
  );
}
