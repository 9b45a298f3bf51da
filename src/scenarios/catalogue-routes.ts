import Type from 'typebox';
import { escapeHtml, htmlPage, inlineCode } from '../http/html-page.js';
import { ProblemError } from '../http/problems.js';
import { problemResponses } from '../http/responses.js';
import { NoQuery, ref } from '../http/schemas.js';
import { COUNTS_NOTHING } from '../http/stages.js';
import type { App } from '../http/types.js';
import { TAG } from '../http/tags.js';
import { CHECKS } from '../report-card/checks.js';
import { type Scenario, ScenarioCatalogue, type ScenarioSetup } from './schemas.js';

/**
 * `GET /scenarios` (listScenarios) and each scenario's page, `/scenarios/<id>`
 * (docs/testing-clients.md#scenarios-a-test-can-count-on). Both need no key and count nothing.
 */
export function catalogueRoutes(app: App, catalogue: ScenarioCatalogue): void {
  app.get(
    '/scenarios',
    {
      config: COUNTS_NOTHING,
      schema: {
        operationId: 'listScenarios',
        summary: 'The catalogue of scenarios',
        description:
          'Named scenarios a test key can arm (`PUT /test-scenario` with `scenario`) and `petstore conformance` ' +
          "runs against a client: each scenario's steps, what the runner does first (`setup`), the report card's " +
          'checks that judge it, what the client under test must do, and its page. Ids and their meaning never ' +
          'change under a `version`: a change of meaning is a new id. Needs no key and counts nothing (the throttle ' +
          'of what counts nothing applies, per key or per address).',
        tags: [TAG.testing],
        'x-stability': 'experimental',
        security: [],
        querystring: NoQuery,
        response: { 200: ref(ScenarioCatalogue), ...problemResponses(400, 429) },
      },
    },
    async () => catalogue,
  );
  const pages = new Map(catalogue.scenarios.map((scenario) => [scenario.id, scenarioPage(scenario)]));
  app.get(
    '/scenarios/:id',
    { config: COUNTS_NOTHING, schema: { hide: true, params: Type.Object({ id: Type.String({ maxLength: 100 }) }) } },
    async (request, reply) => {
      const page = pages.get(request.params.id);
      if (page === undefined) throw new ProblemError('not-found', `There is no scenario ${request.params.id}.`);
      return reply.type('text/html; charset=utf-8').send(page);
    },
  );
}

/** A scenario's page: what happens, what a good client does, sketches in TypeScript and Python, how to run it. */
function scenarioPage(scenario: Scenario): string {
  const { id, title, description, steps, setup, judgedBy, clientMust } = scenario;
  const rows = steps
    .map(
      (step, index) =>
        `<tr><td>${index}</td><td><code>${escapeHtml(step.match ?? 'any request that counts')}</code></td>` +
        `<td><code>${step.answer}</code></td><td>${step.times ?? 1}</td><td>${step.latencyMs ?? 0} ms</td></tr>`,
    )
    .join('\n');
  const checks = judgedBy.map((check) => {
    const { title: name, advice, sketch, python } = CHECKS[check];
    return (
      `<h3><a href="/checks/${check}">${escapeHtml(name)}</a> (<code>${check}</code>)</h3>\n<p>${inlineCode(advice)}</p>\n` +
      `<p>In TypeScript:</p>\n<pre><code>${escapeHtml(sketch)}</code></pre>\n` +
      `<p>In Python:</p>\n<pre><code>${escapeHtml(python)}</code></pre>`
    );
  });
  const body = [
    `<p>A scenario of the catalogue (<code>GET /scenarios</code>), id <code>${id}</code>. ${inlineCode(description)}</p>`,
    `<h2>What happens</h2>\n${setup ? `<p>First, the runner: ${setupInWords(setup)}.</p>\n` : ''}` +
      `<p>Then the steps, in order:</p>\n<table>\n<tr><th>Step</th><th>Meets</th><th>Answer</th><th>Times</th>` +
      `<th>Wait</th></tr>\n${rows}\n</table>`,
    `<h2>What the client under test does</h2>\n<p>${inlineCode(clientMust)}</p>\n<p>It passes when it exits 0, ` +
      `every step was used, and the report card's ${judgedBy.map((check) => `<code>${check}</code>`).join(' and ')} ` +
      `${judgedBy.length === 1 ? 'is' : 'are'} <code>passed</code> with no check <code>failed</code>.</p>`,
    `<h2>What a good client does</h2>\n${checks.join('\n')}`,
    `<h2>Run it</h2>\n<pre><code>${escapeHtml(
      `npx petstore conformance --url http://localhost:8080 --key "$PETSTORE_TEST_KEY" \\\n` +
        `  --scenario ${id} --command "python3 my_client.py"`,
    )}</code></pre>\n<p>Or arm it yourself: <code>PUT /test-scenario</code> with <code>{"scenario": "${id}"}</code>` +
      `${setup ? ' (the setup is then yours to do)' : ''}, run your client, and read <code>GET /test-scenario</code> ` +
      `and <code>GET /report-card</code>.</p>`,
  ].join('\n');
  return htmlPage(title, body);
}

/** What the runner does first, in words. */
export function setupInWords(setup: ScenarioSetup): string {
  const parts: string[] = [];
  if (setup.perMinute !== undefined || setup.perDay !== undefined) {
    const limits = [
      setup.perMinute !== undefined && `${setup.perMinute} requests a minute`,
      setup.perDay !== undefined && `${setup.perDay} a day`,
    ].filter(Boolean);
    parts.push(`gives the child key ${limits.join(' and ')}`);
  }
  if (setup.beforeMidnightSeconds !== undefined)
    parts.push(`moves its clock to ${setup.beforeMidnightSeconds} seconds before its next UTC midnight`);
  if (setup.requests !== undefined) parts.push(`sends ${setup.requests} requests of its own`);
  if (setup.advanceSeconds !== undefined) parts.push(`advances the clock ${setup.advanceSeconds} seconds`);
  if (setup.advanceTo !== undefined) parts.push(`moves the clock to ${setup.advanceTo}`);
  if (setup.webhookEndpoint) parts.push("creates a webhook endpoint at the client's receiver and examines it");
  return parts.join(', then ');
}
