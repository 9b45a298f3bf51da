import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LANE_STEPS } from '../../src/http/lane-steps.js';
import { type TestApp, testApp } from '../helpers/app.js';

/**
 * The fast lane runs the API's steps (`app.apiSteps`) and stands in for the rest of Fastify's pipeline
 * on the routes it answers; src/http/lane-steps.ts says what it does for each step beyond those. Read
 * here from Fastify itself, through its `printRoutes` with the hooks: an `onRequest` step Fastify runs
 * that is not the lane's list, in order, or another hook the account does not cover, fails this test.
 */

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(async () => t.close());

/** The names of the steps Fastify runs for `GET url`, in the order printed, by hook: each hook's, the first steps' one by one. */
function stepsOf(url: string): { onRequest: string[]; others: string[] } {
  const printed = t.app.printRoutes({ method: 'GET', includeHooks: true, commonPrefix: false }).split('\n');
  const last = url.split('/').pop()!;
  // The route's line, then its hooks (`• (onRequest) ["a()","b()"]`) until the next route.
  const at = printed.findIndex((line) => line.includes(`${last} (GET`) && routeOf(printed, line) === url);
  expect(at, `GET ${url} in Fastify's routes`).toBeGreaterThan(-1);
  const names = { onRequest: [] as string[], others: [] as string[] };
  for (const line of printed.slice(at + 1)) {
    const hooks = /• \((\w+)\) (\[.*\])$/.exec(line);
    if (!hooks) break;
    for (const name of JSON.parse(hooks[2]!) as string[])
      names[hooks[1] === 'onRequest' ? 'onRequest' : 'others'].push(
        ...name
          .replace(/\(\)$/, '')
          .replace(/^firstSteps:/, '')
          .split(','),
      );
  }
  return names;
}

/** The full path of a printed route line, from the tree's indentation. */
function routeOf(printed: string[], line: string): string {
  const depth = (l: string) => l.search(/[└├]/);
  const segment = (l: string) => l.slice(depth(l) + 4).replace(/ \(.*$/, '');
  let path = segment(line);
  let level = depth(line);
  for (let i = printed.indexOf(line) - 1; i >= 0 && level > 0; i--) {
    const d = depth(printed[i]!);
    if (d >= 0 && d < level) {
      path = segment(printed[i]!) + path;
      level = d;
    }
  }
  return path.startsWith('/') ? path : `/${path}`;
}

describe("the fast lane's account of Fastify's steps", () => {
  it.each(Object.keys(LANE_STEPS))("runs Fastify's onRequest steps of GET %s, in order, as one list", (url) => {
    const { onRequest } = stepsOf(url);
    expect(onRequest.length).toBeGreaterThan(5);
    expect(onRequest).toEqual(t.app.apiSteps.map((step) => step.name));
  });

  it.each(Object.keys(LANE_STEPS))('covers every other step of GET %s, and no step that is gone', (url) => {
    const { others } = stepsOf(url);
    expect(others.length).toBeGreaterThan(3);
    expect([...new Set(others)].sort()).toEqual(Object.keys(LANE_STEPS[url]!).sort());
  });
});
