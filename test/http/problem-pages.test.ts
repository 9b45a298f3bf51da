import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROBLEM_SLUGS, PROBLEM_TYPES } from '../../src/http/problem-types.js';
import { type TestApp, testApp } from '../helpers/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(async () => t.close());

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sources(path) : path.endsWith('.ts') ? [path] : [];
  });
}

describe('/problems/<slug>', () => {
  it.each(PROBLEM_SLUGS)('%s has a page that explains it', async (slug) => {
    const response = await t.app.inject({ url: `/problems/${slug}` });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toMatch(/^text\/html/);
    expect(response.body).toContain(PROBLEM_TYPES[slug].title);
    expect(response.body).toContain(`HTTP status <strong>${PROBLEM_TYPES[slug].status}</strong>`);
  });

  it('every problem type the code can emit is one of them', () => {
    const root = new URL('../../src/', import.meta.url).pathname;
    // `new ProblemError('<slug>'`, and Fastify's own errors mapped to slugs in http/errors.ts.
    const emitting = /new ProblemError\(\s*'([a-z-]+)'|FST_ERR_\w+: \['([a-z-]+)'/g;
    const emitted = new Set(
      sources(root).flatMap((file) => [...readFileSync(file, 'utf8').matchAll(emitting)].map((m) => (m[1] ?? m[2])!)),
    );
    expect(emitted.size).toBeGreaterThan(10);
    for (const slug of emitted) expect(PROBLEM_SLUGS, slug).toContain(slug);
    // And no page describes a problem nothing emits.
    expect([...emitted].sort()).toEqual([...PROBLEM_SLUGS].sort());
  });

  it('an unknown slug is a 404 problem', async () => {
    const response = await t.app.inject({ url: '/problems/no-such-thing' });
    expect(response.statusCode).toBe(404);
    expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
  });
});

describe('prose follows the configuration', () => {
  it('with other ban rules, the document and the key-banned page say those rules, not the defaults', async () => {
    const custom = await testApp({
      env: { BAN_MAX_SECONDS: '7200', BAN_FIRST_SECONDS: '120', BAN_AFTER_REJECTIONS: '5', BAN_WITHIN_SECONDS: '30' },
    });
    try {
      const rules =
        'A client that gets 5 or more `429`s within 30 seconds for requests sent before the `Retry-After` of its ' +
        'previous `429` had passed is banned for 120 seconds; each further ban within 24 hours of the last one lasts ' +
        'twice as long, up to 2 hours.';
      const document = JSON.parse((await custom.app.inject({ url: '/openapi.json' })).body) as {
        info: { description: string };
      };
      expect(document.info.description).toContain(rules);
      const page = (await custom.app.inject({ url: '/problems/key-banned' })).body;
      expect(page).toContain('up to 2 hours');
      for (const text of [document.info.description, page])
        expect(text).not.toMatch(/one hour|banned for 60 seconds|10 or more/);
    } finally {
      await custom.close();
    }
    // And the defaults, as docs/rate-limits.md#bans gives them.
    const page = (await t.app.inject({ url: '/problems/key-banned' })).body;
    expect(page).toContain(
      '10 or more <code>429</code>s within 60 seconds for requests sent before the <code>Retry-After</code> of its ' +
        'previous <code>429</code> had passed is banned for 60 seconds; each further ban within 24 hours of the last ' +
        'one lasts twice as long, up to one hour.',
    );
  });
});
