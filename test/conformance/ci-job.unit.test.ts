import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { conformanceCommand } from '../../src/conformance/cli.js';

/**
 * The README's GitHub Actions job for a client's CI (README, "Running a client's conformance suite"): valid YAML
 * that starts the service, makes a test key without printing it, and runs the suite with options the runner
 * has, its summary written to the job's summary.
 */

interface Step {
  uses?: string;
  with?: Record<string, unknown>;
  name?: string;
  run?: string;
  'working-directory'?: string;
}

const readme = readFileSync('README.md', 'utf8');
const section = readme.slice(readme.indexOf("### Running a client's conformance suite"));
const yaml = /```yaml\n([\s\S]*?)```/.exec(section)![1]!;
const steps = (parseYaml(yaml) as { jobs: { conformance: { steps: Step[] } } }).jobs.conformance.steps;

describe("the README's CI job", () => {
  it('checks out the client and the service, and sets up a supported Node.js', () => {
    expect(steps.filter((step) => step.uses?.startsWith('actions/checkout@'))).toHaveLength(2);
    expect(steps.find((step) => step.uses?.startsWith('actions/setup-node@'))?.with).toEqual({ 'node-version': 24 });
  });

  it('starts the service, waits until it is ready, and makes a test key it masks', () => {
    const start = steps.find((step) => step.name === 'Start Petstore')!.run!;
    expect(start).toMatch(/npm ci\n/);
    expect(start).toMatch(/npm start .*&\n/);
    expect(start).toContain('until curl -sf http://127.0.0.1:8081/readyz');
    expect(start).toContain('npx petstore keys create --plan pro --test --json');
    expect(start).toContain('::add-mask::$key');
  });

  it('runs the suite with options the runner has, the summary to the job summary', () => {
    const run = steps.find((step) => step.name === 'Conformance')!.run!;
    expect(run).toMatch(/^npx petstore conformance /);
    const known = new Set(
      conformanceCommand({ out: () => {}, err: () => {}, exit: () => {}, env: {}, clock: () => 0 }).options.map(
        (option) => option.long,
      ),
    );
    for (const [option] of run.matchAll(/--[a-z-]+/g)) expect(known, option).toContain(option);
    expect(run).toContain('--summary "$GITHUB_STEP_SUMMARY"');
    expect(run).toContain('--junit');
  });
});
