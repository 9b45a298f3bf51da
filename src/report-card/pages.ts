import { COUNTS_NOTHING } from '../http/stages.js';
import Type from 'typebox';
import { escapeHtml, htmlPage, inlineCode } from '../http/html-page.js';
import { ProblemError } from '../http/problems.js';
import type { App } from '../http/types.js';
import { CHECK_IDS, CHECKS, type CheckId } from './checks.js';

/** A check's page: what it watches, its rule, what a good client does, and a sketch of one in TypeScript and Python. */
function checkPage(id: CheckId): string {
  const { title, situation, rule, advice, sketch, python } = CHECKS[id];
  const body = [
    `<p>A check of the <a href="/docs">report card</a> of a test key (<code>GET /report-card</code>). Id ` +
      `<code>${id}</code>.</p>`,
    `<h2>What it watches</h2>\n<p>${inlineCode(situation)} Until this happens, the check is <code>untested</code>.</p>`,
    `<h2>When it goes wrong</h2>\n<p>${inlineCode(rule)}</p>`,
    `<h2>What a good client does</h2>\n<p>${inlineCode(advice)}</p>`,
    `<h3>In TypeScript</h3>\n<pre><code>${escapeHtml(sketch)}</code></pre>`,
    `<h3>In Python</h3>\n<pre><code>${escapeHtml(python)}</code></pre>`,
  ].join('\n');
  return htmlPage(title, body);
}

/** `/checks/<id>`: each check's page, made once. Counts nothing, like the problem pages. */
export function checkPages(app: App): void {
  const pages = new Map<string, string>(CHECK_IDS.map((id) => [id, checkPage(id)]));
  app.get(
    '/checks/:id',
    { config: COUNTS_NOTHING, schema: { hide: true, params: Type.Object({ id: Type.String({ maxLength: 100 }) }) } },
    async (request, reply) => {
      const page = pages.get(request.params.id);
      if (page === undefined) throw new ProblemError('not-found', `There is no check ${request.params.id}.`);
      return reply.type('text/html; charset=utf-8').send(page);
    },
  );
}
