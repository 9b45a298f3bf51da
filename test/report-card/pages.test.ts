import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHECK_IDS, CHECKS } from '../../src/report-card/checks.js';
import { escapeHtml } from '../../src/http/html-page.js';
import { type TestApp, testApp } from '../helpers/app.js';
import { expectProblem } from '../helpers/orders.js';

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(async () => {
  await t.close();
});

describe("the checks' pages (/checks/<id>, each card check's docs)", () => {
  it.each(CHECK_IDS)('/checks/%s: an HTML page with the check’s title and a sketch of a good client', async (id) => {
    const response = await t.request({ url: `/checks/${id}` });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(response.body).toContain(`<h1>${escapeHtml(CHECKS[id].title)}</h1>`);
    expect(response.body).toContain(`<code>${id}</code>`);
    expect(response.body).toMatch(/<pre><code>[^<]+<\/code><\/pre>/);
  });

  it('answers a check it does not have with a 404 problem', async () => {
    expectProblem(await t.request({ url: '/checks/nope' }), 404, 'not-found');
  });

  it('counts nothing toward a key’s plan', async () => {
    const key = await t.newKey({ plan: 'free' });
    const before = Number(
      (await t.request({ url: '/pets', headers: { 'x-api-key': key } })).headers['x-ratelimit-remaining'],
    );
    for (const id of CHECK_IDS) await t.request({ url: `/checks/${id}`, headers: { 'x-api-key': key } });
    const after = Number(
      (await t.request({ url: '/pets', headers: { 'x-api-key': key } })).headers['x-ratelimit-remaining'],
    );
    expect(after).toBe(before - 1);
  });
});
