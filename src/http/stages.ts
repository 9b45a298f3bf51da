import type { FastifyContextConfig, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/**
 * One request, one pipeline of stages (docs/design.md#one-pipeline-of-stages). Each component that takes
 * part in a request (identify, limits, faults, versions, conditional reads, the report card, metrics, the
 * access line…) gives one stage: the request fields it owns, and what it does at each Fastify phase it
 * needs, for one route. The wiring orders the stages in one list (src/stages.ts); one Fastify hook per phase
 * runs the list, so the number of hooks does not grow with the stages. The request phases run the list in
 * its order, the answer's phases in the reverse order: the stage that sees a request first sees its answer
 * last, as the layers of an onion.
 *
 * What a stage does for a route is decided once per route, from the route's config (Fastify's route
 * `config`: whether it counts, is graded, is an API operation, is a conditional read…): a stage that takes no
 * part in a route's requests costs them nothing.
 */

/**
 * One of the steps of a request phase: it may answer by itself (a 429, a preflight), and then returns the
 * reply; or throw a problem; or return a promise of either.
 */
export type Step = (request: FastifyRequest, reply: FastifyReply) => unknown;

/** A step of the answer (`onSend`): the payload to send, at once or once a promise settles. */
export type SendStep = (request: FastifyRequest, reply: FastifyReply, payload: unknown) => unknown;

/** A step once the answer is sent (`onResponse`), or the client is gone (`onRequestAbort`). */
export type AfterStep = (request: FastifyRequest, reply: FastifyReply) => void;

/** What a stage does at each phase of one route's requests. */
export interface Phases {
  /** Before anything is read but the head: identify, limit, refuse. */
  onRequest?: Step;
  /**
   * Still before the body is read, once every stage's `onRequest` has run (in the same Fastify hook): what
   * an API operation requires of a request that was counted (a key, a version), a body it can read.
   */
  beforeBody?: Step;
  /** Once the body is read, before it is validated. */
  preValidation?: Step;
  /** The answer, before it is written: its headers, its shape, or another answer in its place. */
  onSend?: SendStep;
  onResponse?: AfterStep;
  onRequestAbort?: (request: FastifyRequest) => void;
}

/** What a route is, as the stages see it: its config, with the method and URL Fastify adds to it. */
export type RouteConfig = FastifyContextConfig & { url?: string; method?: string | string[] };

export interface Stage {
  readonly name: string;
  /** The request fields the stage owns, with the value each request starts with (Fastify's request decorators). */
  readonly fields?: Readonly<Record<string, unknown>>;
  /** Its work for one route's requests, decided once per route; `UNROUTED` for a request no route answers. */
  forRoute(route: RouteConfig): Phases;
}

/** The config of a route that counts toward no plan (docs/rate-limits.md#uncounted-paths). */
export const COUNTS_NOTHING = Object.freeze({ counted: false as const });

/** The config of what no route answers (an unknown path, a URL Fastify cannot route): it counts, like any request. */
export const UNROUTED: RouteConfig = Object.freeze({ unrouted: true });

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Set for no route: the requests no route answers (`UNROUTED`). */
    unrouted?: boolean;
    /** An API operation (the routes the wiring registers as the API's): it needs a key, in a version. */
    api?: boolean;
    /** False for a route that counts toward no plan (docs/rate-limits.md#uncounted-paths); every other counts. */
    counted?: boolean;
    /** False for an API operation that counts but the report card does not grade (a test key's child keys). */
    graded?: boolean;
    /** The scope an access token needs for this API operation (oauth/scopes.ts); none: any token of the key. */
    scope?: string;
    /**
     * The token endpoint (oauth/): its caller is known from client credentials, which may be in the body, so every
     * stage's request phases run once the body is read; the report card grades it for `reuses-tokens` only.
     */
    clientCredentials?: boolean;
    /** A long-lived answer (the event stream): its stages run at its opening, and at its end. */
    stream?: boolean;
  }
  interface FastifyRequest {
    /** What the stages do for this request's route, at each phase (`Pipeline.planOf`). */
    plan: Plan | null;
  }
}

/** What the stages do for one route: each phase's steps, in the order they run. */
export interface Plan {
  /** Every stage's `onRequest`, then every stage's `beforeBody`. */
  onRequest: Step[];
  preValidation: Step[];
  onSend: SendStep[];
  onResponse: AfterStep[];
  onRequestAbort: ((request: FastifyRequest) => void)[];
}

/**
 * Installs `stages` on `app`: their fields as request decorators, and one hook per phase that runs the
 * plan of the request's route (built at the route's first request, then kept with its config).
 */
export function pipeline(app: FastifyInstance, stages: readonly Stage[]): void {
  for (const stage of stages)
    for (const [name, value] of Object.entries(stage.fields ?? {})) app.decorateRequest(name, value);
  app.decorateRequest('plan', null);
  const build = (route: RouteConfig) => planOf(stages, route);
  const unrouted = build(UNROUTED);
  const plans = new WeakMap<object, Plan>();
  /** The plan of a request's route: built once per route, from the route's config object, at its first request. */
  const planFor = (request: FastifyRequest): Plan => {
    if (request.plan) return request.plan;
    if (request.is404) return (request.plan = unrouted);
    const config = request.routeOptions.config as RouteConfig;
    let plan = plans.get(config);
    if (plan === undefined) plans.set(config, (plan = build(config)));
    return (request.plan = plan);
  };

  app.addHook('onRequest', function stagesOnRequest(request, reply, done) {
    answer(planFor(request).onRequest, request, reply, done);
  });
  app.addHook('preValidation', function stagesPreValidation(request, reply, done) {
    answer(planFor(request).preValidation, request, reply, done);
  });
  app.addHook('onSend', function stagesOnSend(request, reply, payload, done) {
    send(planFor(request).onSend, request, reply, payload, done);
  });
  app.addHook('onResponse', function stagesOnResponse(request, reply, done) {
    for (const step of planFor(request).onResponse) step(request, reply);
    done();
  });
  app.addHook('onRequestAbort', function stagesOnRequestAbort(request, done) {
    for (const step of planFor(request).onRequestAbort) step(request);
    done();
  });
}

/** What `stages` do for one route: each phase's steps, the answer's phases unwinding. */
export function planOf(stages: readonly Stage[], route: RouteConfig): Plan {
  const parts = stages.map((stage) => stage.forRoute(route));
  const steps = <K extends keyof Phases>(phase: K) =>
    parts.map((part) => part[phase]).filter((step): step is NonNullable<Phases[K]> => step !== undefined);
  const request = [...steps('onRequest'), ...steps('beforeBody')];
  // Whose request it is may be known only from its body (client credentials): the request's phases wait for it.
  const byBody = route.clientCredentials === true;
  return {
    onRequest: byBody ? [] : request,
    preValidation: byBody ? [...request, ...steps('preValidation')] : steps('preValidation'),
    // The stage that saw the request first sees the answer last.
    onSend: steps('onSend').reverse(),
    onResponse: steps('onResponse').reverse(),
    onRequestAbort: steps('onRequestAbort').reverse(),
  };
}

/**
 * Runs `steps` in order until one answers (the reply is sent): synchronously until a step returns a
 * promise, then after it. Throws (or rejects with) what a step throws.
 */
export function runSteps(
  steps: readonly Step[],
  request: FastifyRequest,
  reply: FastifyReply,
  from = 0,
): FastifyReply | undefined | Promise<FastifyReply | undefined> {
  for (let i = from; i < steps.length; i++) {
    const answered = steps[i]!(request, reply);
    if (answered instanceof Promise)
      return answered.then((value) => (reply.sent || value === reply ? reply : runSteps(steps, request, reply, i + 1)));
    // A step that answered returns the reply, which may not count as sent yet (an asynchronous `onSend`).
    if (reply.sent || answered === reply) return reply;
  }
  return undefined;
}

/**
 * A phase's steps that may answer, as Fastify's callback hooks run them: no promise where no step makes
 * one, and no `done` once a step answered, so that Fastify never goes on to the route, even while an
 * asynchronous `onSend` step still holds the answer: Fastify would answer a second time.
 */
function answer(steps: readonly Step[], request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void) {
  let answered: ReturnType<typeof runSteps>;
  try {
    answered = runSteps(steps, request, reply);
  } catch (error) {
    return done(error as Error);
  }
  if (answered instanceof Promise) answered.then((value) => value === undefined && !reply.sent && done(), done);
  else if (answered === undefined && !reply.sent) done();
}

/** The answer's steps, each given the payload the one before made: synchronously until one makes a promise. */
function send(
  steps: readonly SendStep[],
  request: FastifyRequest,
  reply: FastifyReply,
  payload: unknown,
  done: (error: Error | null, payload?: unknown) => void,
  from = 0,
): void {
  for (let i = from; i < steps.length; i++) {
    let next: unknown;
    try {
      next = steps[i]!(request, reply, payload);
    } catch (error) {
      return done(error as Error);
    }
    if (next instanceof Promise) {
      next.then(
        (made) => send(steps, request, reply, made, done, i + 1),
        (error: Error) => done(error),
      );
      return;
    }
    payload = next;
  }
  done(null, payload);
}

/** Sets each of `values` on the reply. */
export function setHeaders(reply: FastifyReply, values: Readonly<Record<string, string>>): FastifyReply {
  for (const name in values) reply.header(name, values[name]!);
  return reply;
}
