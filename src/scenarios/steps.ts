import type { FastifyRequest } from 'fastify';
import { callerNow, type Clock } from '../clock.js';
import type { Met, StepAhead, StepsAhead } from '../faults/stage.js';
import type { ScenarioStep } from './schemas.js';
import { type ArmedScript, type Scripts } from './scripts.js';

/** How many times a request tries again to use the step in turn when other requests keep using it first. */
const MAX_TRIES = 100;

const matches = (step: ScenarioStep, operation: string) => step.match === undefined || step.match === operation;

/** A step as the faults stage applies it. */
const metOf = (step: ScenarioStep, index: number, scenario: string | null): Met => ({
  answer: step.answer,
  latencyMs: step.latencyMs ?? 0,
  by: scenario === null ? `step ${index} of its script` : `step ${index} of scenario ${scenario}`,
});

/**
 * The step of its key's script that an API request of a test key would meet (docs/testing-clients.md#scenarios-a-test-can-count-on),
 * for the faults stage (faults/stage.ts): the step in turn, when it matches the request. Its use, once the
 * limiter admitted the request, is a compare-and-set in the store (./scripts.ts): a request that another beat to
 * the step reads the script again and meets the next step, if that one matches it too.
 */
export function stepsAhead(scripts: Scripts, clock: Clock): StepsAhead {
  const aheadOf = (request: FastifyRequest, operation: string, script: ArmedScript | null): StepAhead | undefined => {
    const step = script?.steps[script.position];
    if (script === null || step === undefined || !matches(step, operation)) return undefined;
    return { pass: step.answer === 'pass', use: () => use(request, operation, script) };
  };

  async function use(request: FastifyRequest, operation: string, first: ArmedScript): Promise<Met | undefined> {
    let script: ArmedScript | null = first;
    for (let tries = 0; script !== null && tries < MAX_TRIES; tries++) {
      const step = script.steps[script.position];
      if (step === undefined || !matches(step, operation)) return undefined;
      const at = new Date(callerNow(request.identity.clock, clock())).toISOString();
      if (await scripts.use(script, request.id, at)) return metOf(step, script.position, script.scenario);
      script = await scripts.of(script.keyId);
    }
    return undefined;
  }

  return (request, operation) => {
    const identity = request.identity;
    if (identity.kind !== 'key') return undefined;
    const script = scripts.of(identity.key.id);
    return script instanceof Promise
      ? script.then((read) => aheadOf(request, operation, read))
      : aheadOf(request, operation, script);
  };
}
