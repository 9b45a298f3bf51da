import type { FastifyRequest } from 'fastify';
import { operationOf } from '../http/method-not-allowed.js';
import { ProblemError } from '../http/problems.js';
import { problemResponses } from '../http/responses.js';
import { ref } from '../http/schemas.js';
import type { RouteConfig } from '../http/stages.js';
import type { App } from '../http/types.js';
import type { KeysRepository } from '../keys/repository.js';
import { TAG } from '../http/tags.js';
import { TEST_MODE_ABOUT, TEST_MODE_CONFIG, testKeyOf } from '../test-mode/get-clock.js';
import { Script, type ScenarioStep, ScriptRequest, type Scenario } from './schemas.js';
import type { Scripts } from './scripts.js';

/** The operation whose requests `drop` ends: an event stream. */
const STREAM_OPERATION = 'GET /events/stream';

/**
 * The counted API operations, as a step's `match` names them (`GET /pets/{petId}`), gathered as the routes are
 * registered on `api` (after the hook that makes them API operations).
 */
export function countedOperations(api: App): ReadonlySet<string> {
  const names = new Set<string>();
  api.addHook('onRoute', (route) => {
    const config = route.config as RouteConfig | undefined;
    if (!config?.api || config.counted === false || [route.method].flat().includes('HEAD')) return;
    names.add(operationOf(route));
  });
  return names;
}

export interface ScriptRoutesDeps {
  scripts: Scripts;
  keys: KeysRepository;
  /** The counted API operations a step may match (`countedOperations`). */
  operations: ReadonlySet<string>;
  /** The catalogue's scenarios, by id. */
  scenarios: ReadonlyMap<string, Pick<Scenario, 'steps'>>;
}

const SCRIPT_ABOUT =
  'Steps are used strictly in order: your next counted API request that matches the step in turn (any, when it ' +
  'has no `match`) meets its answer, `times` times, as the `Prefer` fault of the same name would, without ' +
  '`Preference-Applied`. The step applies after the limiter: a request it refuses (or a ban) uses no step. A ' +
  'request that does not match is answered normally and uses nothing; one that asks for a fault with `Prefer` ' +
  "meets that fault and uses none. Your key's standing fault profile applies only to requests no step met. " +
  'Exact across instances: two never use one step twice.';

/**
 * `PUT`, `GET` and `DELETE /test-scenario` (docs/testing-clients.md#scenarios-a-test-can-count-on): a test key's
 * script, armed, read and disarmed.
 */
export function scriptRoutes(app: App, { scripts, keys, operations, scenarios }: ScriptRoutesDeps): void {
  const common = { tags: [TAG.testing], 'x-stability': 'experimental' } as const;
  app.put(
    '/test-scenario',
    {
      config: TEST_MODE_CONFIG,
      schema: {
        ...common,
        operationId: 'armTestScenario',
        summary: 'Arm a script of faults for your test key',
        description:
          "Arms your key's script, in place of any before it, and answers it: your own `steps`, or a named " +
          "`scenario`'s (`GET /scenarios`; its `setup` is the runner's to do, `petstore conformance`). A step " +
          '`match`es an operation as the document writes it (`GET /pets/{petId}`), which must be one that counts; ' +
          `\`drop\` needs \`match: "${STREAM_OPERATION}"\`. Arming starts your key's fault sequence over. ` +
          `${SCRIPT_ABOUT} ${TEST_MODE_ABOUT}`,
        body: ref(ScriptRequest),
        response: { 200: ref(Script), ...problemResponses(400, 403, 429) },
      },
    },
    async (request): Promise<Script> => {
      const key = testKeyOf(request);
      const { scenario, steps } = stepsOf(request.body as ScriptRequest, scenarios, operations);
      await scripts.arm(key.id, scenario, steps);
      if (key.faults) await keys.restartFaults(key.id);
      return scripts.view(key.id);
    },
  );
  app.get(
    '/test-scenario',
    {
      config: TEST_MODE_CONFIG,
      schema: {
        ...common,
        operationId: 'getTestScenario',
        summary: "Your test key's script",
        description:
          'Your script: its steps, the step your next matching request meets (`next`), every use of a step so far ' +
          "(in order, with the request that used it and when, in your key's time), and whether every step was used " +
          `(\`done\`). None armed: no steps, done. ${TEST_MODE_ABOUT}`,
        response: { 200: ref(Script), ...problemResponses(403, 429) },
      },
    },
    async (request: FastifyRequest): Promise<Script> => scripts.view(testKeyOf(request).id),
  );
  app.delete(
    '/test-scenario',
    {
      config: TEST_MODE_CONFIG,
      schema: {
        ...common,
        operationId: 'disarmTestScenario',
        summary: "Disarm your test key's script",
        description: `Your key's requests are answered normally again. \`DELETE /test-data\` does this too. ${TEST_MODE_ABOUT}`,
        response: { 200: ref(Script), ...problemResponses(403, 429) },
      },
    },
    async (request: FastifyRequest): Promise<Script> => {
      const key = testKeyOf(request);
      await scripts.disarm(key.id);
      return scripts.view(key.id);
    },
  );
}

/** The steps a `PUT /test-scenario` arms, or a `400` naming the member at fault. */
function stepsOf(
  body: ScriptRequest,
  scenarios: ScriptRoutesDeps['scenarios'],
  operations: ReadonlySet<string>,
): { scenario: string | null; steps: ScenarioStep[] } {
  if (body.steps !== undefined && body.scenario !== undefined)
    throw invalid('/scenario', 'may not be sent with `steps`: send one or the other');
  if (body.steps === undefined && body.scenario === undefined)
    throw invalid('/steps', 'is required, unless `scenario` is sent');
  if (body.scenario !== undefined) {
    const named = scenarios.get(body.scenario);
    if (named === undefined) throw invalid('/scenario', `is no scenario of the catalogue (GET /scenarios)`);
    return { scenario: body.scenario, steps: [...named.steps] };
  }
  const steps = body.steps!;
  steps.forEach((step, index) => {
    if (step.match !== undefined && !operations.has(step.match))
      throw invalid(`/steps/${index}/match`, 'names no operation that counts (e.g. `GET /pets/{petId}`)');
    if (step.answer === 'drop' && step.match !== STREAM_OPERATION)
      throw invalid(`/steps/${index}/match`, `must be \`${STREAM_OPERATION}\` for \`drop\``);
  });
  return { scenario: null, steps };
}

function invalid(name: string, message: string): ProblemError {
  return new ProblemError('invalid-request', `The script was not armed: ${name} ${message}.`, {
    errors: [{ in: 'body', name, message }],
  });
}
