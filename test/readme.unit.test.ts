import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { plansTable } from '../src/openapi/document.js';

const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');

describe('README', () => {
  it('shows the plans table generated from src/ratelimit/plans.ts', () => {
    expect(readme).toContain(plansTable());
  });

  it('documents every environment variable the service reads', () => {
    const source = ['config.ts', 'config-webhooks.ts']
      .map((file) => readFileSync(new URL(`../src/${file}`, import.meta.url), 'utf8'))
      .join('\n');
    const variables = new Set([...source.matchAll(/env\.([A-Z_]+)|\(env, '([A-Z_]+)'/g)].map((m) => m[1] ?? m[2]));
    expect(variables.size).toBeGreaterThan(10);
    for (const variable of variables) expect(readme, variable).toContain(`\`${variable}\``);
  });

  it('starts with the two quick-start commands', () => {
    expect(readme).toMatch(/## Quick start\n\n```sh\nnpm ci && npm start\nnpm test\n```/);
  });
});
