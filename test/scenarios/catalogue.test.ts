/**
 * The catalogue of named scenarios (docs/testing-clients.md#scenarios-a-test-can-count-on): served without a
 * key, versioned, judging every check of the report card, each scenario armable by its id, with a page of its
 * own, and named in the document, the README and the guide.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHECK_IDS, CHECKS } from '../../src/report-card/checks.js';
import type { ScenarioCatalogue } from '../../src/scenarios/schemas.js';
import { json, type TestApp, testApp } from '../helpers/app.js';

let t: TestApp;
let catalogue: ScenarioCatalogue;
beforeAll(async () => {
  t = await testApp();
  const answer = await t.app.inject({ url: '/scenarios' });
  expect(answer.statusCode).toBe(200);
  catalogue = json(answer);
});
afterAll(async () => t?.close());

describe('the catalogue of scenarios', () => {
  it('needs no key, counts nothing, and is versioned by date', async () => {
    expect(catalogue.version).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    const key = await t.newKey('free');
    const answer = await t.app.inject({ url: '/scenarios', headers: { 'x-api-key': key } });
    expect(answer.statusCode).toBe(200);
    expect(answer.headers['x-ratelimit-remaining']).toBe('60');
  });

  it('has at least fourteen scenarios, with unique ids, and every check of the card judged by one', () => {
    const ids = catalogue.scenarios.map((scenario) => scenario.id);
    expect(ids.length).toBeGreaterThanOrEqual(14);
    expect(new Set(ids).size).toBe(ids.length);
    const judged = new Set(catalogue.scenarios.flatMap((scenario) => scenario.judgedBy));
    expect([...judged].sort()).toEqual([...CHECK_IDS].sort());
    for (const scenario of catalogue.scenarios) {
      expect(scenario.docs).toBe(`${t.config.publicUrl}/scenarios/${scenario.id}`);
      expect(scenario.clientMust.length).toBeGreaterThan(20);
    }
  });

  it('holds the situations the contract names', () => {
    const byId = new Map(catalogue.scenarios.map((scenario) => [scenario.id, scenario]));
    const steps = (id: string) =>
      byId.get(id)!.steps.map((step) => `${step.match ?? '*'} ${step.answer}×${step.times ?? 1}`);
    expect(steps('retry-after-503')).toEqual(['GET /pets/{petId} 503×1', 'GET /pets/{petId} pass×1']);
    expect(steps('backs-off-500')).toEqual(['GET /pets/{petId} 500×3', 'GET /pets/{petId} pass×1']);
    expect(steps('reset-order')).toEqual(['POST /store/orders reset×1', 'POST /store/orders pass×1']);
    expect(steps('rate-limited-burst')[0]).toBe('* 429×10');
    expect(byId.get('rate-limited-burst')!.judgedBy).toContain('not-banned');
    expect(byId.get('pace-minute')!.setup).toMatchObject({ perMinute: 5 });
    expect(byId.get('revalidate')!.judgedBy).toEqual(['revalidates']);
    expect(byId.get('page-to-end')!.judgedBy).toEqual(['cursor-untouched']);
    expect(byId.get('version-pin')!.judgedBy).toEqual(['pins-version']);
    expect(Date.parse(byId.get('sunset-gone')!.setup!.advanceTo!)).toBeGreaterThan(t.config.petsGet.sunsetAt.getTime());
    expect(byId.get('webhook-receiver')!.setup).toEqual({ webhookEndpoint: true });
  });

  it('arms each scenario by its id, with its steps', async () => {
    const key = (await t.keys.create({ plan: 'free', test: true })).key;
    for (const scenario of catalogue.scenarios) {
      const answer = await t.app.inject({
        method: 'PUT',
        url: '/test-scenario',
        headers: { 'x-api-key': key },
        payload: { scenario: scenario.id },
      });
      expect(answer.statusCode, scenario.id).toBe(200);
      expect(json(answer)).toMatchObject({ scenario: scenario.id, steps: scenario.steps, next: 0, done: false });
    }
  });

  it('gives each scenario a page: what happens, what a good client does, in TypeScript and in Python', async () => {
    for (const scenario of catalogue.scenarios) {
      const page = await t.app.inject({ url: `/scenarios/${scenario.id}` });
      expect(page.statusCode, scenario.id).toBe(200);
      expect(page.headers['content-type']).toMatch(/^text\/html/);
      expect(page.body).toContain('<h2>What happens</h2>');
      expect(page.body).toContain('In TypeScript:');
      expect(page.body).toContain('In Python:');
      for (const check of scenario.judgedBy) expect(page.body).toContain(`href="/checks/${check}"`);
      if (scenario.setup) expect(page.body).toContain('First, the runner:');
    }
    expect((await t.app.inject({ url: '/scenarios/nope' })).statusCode).toBe(404);
    // Every check's page has its Python sketch too.
    for (const id of CHECK_IDS) expect((await t.app.inject({ url: `/checks/${id}` })).body).toContain('In Python');
    expect(Object.values(CHECKS).every((check) => check.python.length > 0)).toBe(true);
  });

  it('is named in the document, the README and the guide', async () => {
    const doc = json(await t.app.inject({ url: '/openapi.json' }));
    for (const name of ['ScenarioCatalogue', 'Scenario', 'ScenarioStep', 'Script', 'ScriptRequest'])
      expect(doc.components.schemas[name], name).toBeDefined();
    expect(doc.paths['/scenarios'].get.responses['200'].content['application/json'].schema.$ref).toBe(
      '#/components/schemas/ScenarioCatalogue',
    );
    const readme = readFileSync('README.md', 'utf8');
    const guide = readFileSync('docs/testing-clients.md', 'utf8');
    for (const { id } of catalogue.scenarios) {
      expect(readme, id).toContain(`\`${id}\``);
      expect(guide, id).toContain(`\`${id}\``);
    }
  });
});
