import { setTimeout as delay } from 'node:timers/promises';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { internalError, sendProblem, storeUnavailable } from '../http/errors.js';
import { askedOperation, operationOf } from '../http/method-not-allowed.js';
import { ProblemError } from '../http/problems.js';
import type { Phases, Step, Stage } from '../http/stages.js';
import type { draw, FaultDraws } from './draws.js';
import { appliedPreferences, PREFERENCE_APPLIED_HEADER, parsePrefer, type Preferences } from './prefer.js';
import type { Fault } from './profile.js';

const PREFER_FIELD = 'prefer';

/** A profile's draw for one request. */
type Drawn = ReturnType<typeof draw>;

/** What a request meets: a fault, `drop` (a stream ended after its next event), or its normal answer. */
export type Answer = Fault | 'drop' | 'pass';

/** What a request meets, as one of the sources asked for it. */
export interface Met {
  answer: Answer;
  latencyMs: number;
  /** A `drop`'s events before it: `fault=drop; events=<n>`. */
  dropAfter?: number;
  /** In words, for the answer's detail and the log: `Prefer: fault=503`, `step 2 of its script`. */
  by: string;
}

/**
 * The step of a test key's script (scenarios/) that a request would meet: whether it is a `pass`, and its use
 * once the limiter admitted the request (what it answers; undefined when another request used it first and the
 * step after it does not match this request).
 */
export interface StepAhead {
  readonly pass: boolean;
  use(): Promise<Met | undefined>;
}

/**
 * Test keys' scripts, as this stage asks them: the step a request of a test key would meet, if any, given the
 * operation it asked for (`GET /pets/{petId}`).
 */
export type StepsAhead = (
  request: FastifyRequest,
  operation: string,
) => StepAhead | undefined | Promise<StepAhead | undefined>;

/** A request that a step of its key's script would meet, until the step is used. */
interface Scripted {
  readonly ahead: StepAhead;
  /** What the key's profile drew for it: what it meets if another request uses the step first. */
  readonly drawn: Met | undefined;
  /** A conditional read's `pass`: used at the answer, once the read was counted. */
  atAnswer: boolean;
}

declare module 'fastify' {
  interface FastifyRequest {
    /**
     * The fault this test key's request meets, and what asked for it (a `429` is the limit stage's
     * `forcedRefusal`).
     */
    fault: { fault: Exclude<Answer, '429' | 'pass'>; by: string; dropAfter?: number } | undefined;
    /** The step of its key's script this request would meet, until it is used. */
    scripted: Scripted | undefined;
  }
}

/** What the faults stage answers with, beyond the problems' base URL and the profiles' draws. */
export interface FaultsSettings {
  /** Test keys' scripts, where the service has them. */
  steps?: StepsAhead;
  /** Refuses an admitted request as the limit stage refuses one forced to (`forcedRefusal`): a step's `429`. */
  refuse: Step;
}

/**
 * Test keys that misbehave on demand. Every request of a test key that counts toward its limits may
 * meet a fault, asked for with `Prefer`, drawn from the key's profile (./draws.ts) or met at a step of the key's
 * script (scenarios/), and each behaves as the real one would:
 *
 * - `latency`: the request waits before anything else happens to it, whatever its answer;
 * - `429`: refused by the limiter as if its windows were full (./ratelimit/store.ts `refuse`): real
 *   headers, `Retry-After`, and the rejection counts toward a ban;
 * - `503` and `500`: admitted and counted, then answered as a store outage or a failure would be,
 *   once the body is read and before it is validated (so that the report card knows a repeat of it);
 * - `reset`: handled in full (an order is placed), then the connection is reset instead of answered:
 *   the lost answer that `Idempotency-Key` exists for.
 *
 * A script's step applies once the limiter admitted the request (one it refuses uses no step), when the
 * request asked for no fault: in the profile's place, and without `Preference-Applied` (the client asked for
 * nothing). A step's `429` therefore meets a request that was counted, and refuses it as `Prefer`'s would.
 * A live key's preferences are ignored; `Preference-Applied` names those applied.
 */
export function faultsStage(publicUrl: string, draws: FaultDraws, settings: FaultsSettings): Stage {
  const { steps, refuse } = settings;

  /** Before the limit stage: which fault, if any, or the step ahead; a wait asked for or drawn, now. */
  function planFault(
    request: FastifyRequest,
    reply: FastifyReply,
    operation?: string,
    stream = false,
  ): Promise<void> | undefined {
    const identity = request.identity;
    if (identity.kind !== 'key' || !identity.key.test) return undefined;
    const sent = request.headers[PREFER_FIELD];
    const asked = parsePrefer(Array.isArray(sent) ? sent.join(', ') : sent);
    // `drop` is an event stream's: elsewhere it cannot be honoured, and is not applied.
    if (asked.fault === 'drop' && !stream) delete asked.fault;
    // The profile draws for every request, asked for or not: its n-th request meets its n-th draw.
    const drawn = identity.key.faults ? draws.next(identity.key.id, identity.key.faults) : undefined;
    const applied = appliedPreferences(asked);
    if (applied) reply.header(PREFERENCE_APPLIED_HEADER, applied);
    // A request that asks for a fault meets it and uses no step.
    if (operation !== undefined && steps && asked.fault === undefined) {
      const ahead = steps(request, askedOperation(request, operation));
      if (ahead instanceof Promise)
        return ahead.then((step) => (step ? stepPlan(request, step, asked, drawn) : ordinary(request, asked, drawn)));
      if (ahead) return stepPlan(request, ahead, asked, drawn);
    }
    return ordinary(request, asked, drawn);
  }

  /** A request no step meets: `Prefer`'s fault, else the profile's; `Prefer`'s wait, else the profile's. */
  function ordinary(request: FastifyRequest, asked: Preferences, drawn: Drawn | undefined) {
    const fault = asked.fault ?? drawn?.fault;
    const latencyMs = asked.latencyMs ?? drawn?.latencyMs ?? 0;
    if (fault === undefined && latencyMs === 0) return undefined;
    const by = asked.fault ? `Prefer: fault=${asked.fault}` : 'its fault profile';
    request.log.info({ fault, latencyMs, by }, 'test key fault');
    const { dropAfter } = asked;
    if (fault) mark(request, { answer: fault, latencyMs, by, ...(dropAfter && fault === 'drop' ? { dropAfter } : {}) });
    return latencyMs > 0 ? delay(latencyMs).then(() => undefined) : undefined;
  }

  /** A request a step would meet: the step takes the profile's place (kept aside, should the step be lost). */
  function stepPlan(request: FastifyRequest, ahead: StepAhead, asked: Preferences, drawn: Drawn | undefined) {
    const drawnWait = asked.latencyMs === undefined ? (drawn?.latencyMs ?? 0) : 0;
    const aside: Met | undefined =
      drawn?.fault || drawnWait > 0
        ? { answer: drawn?.fault ?? 'pass', latencyMs: drawnWait, by: 'its fault profile' }
        : undefined;
    request.scripted = { ahead, drawn: aside, atAnswer: false };
    // Its answer is not the `304` a conditional read may be: counted now, so that one the limiter refuses uses none.
    if (!ahead.pass) request.countNow = true;
    // `Prefer: latency` still waits.
    return asked.latencyMs ? delay(asked.latencyMs).then(() => undefined) : undefined;
  }

  /**
   * Once the request is admitted and its body read (`preValidation`): the step ahead used, and a `503`, a `500`
   * or a step's `429` answered here, in place of the route.
   */
  function failNow(request: FastifyRequest, reply: FastifyReply) {
    const scripted = request.scripted;
    if (scripted === undefined) return answerNow(request, reply);
    // A conditional read's `pass` waits for its count, at the answer: a `304` counts nothing.
    if (scripted.ahead.pass && request.countDeferred) {
      scripted.atAnswer = true;
      return undefined;
    }
    request.scripted = undefined;
    return scripted.ahead.use().then((met) => meet(request, reply, met ?? scripted.drawn));
  }

  /** A step's answer (or, the step lost, the profile's draw): its wait, then its fault. */
  async function meet(request: FastifyRequest, reply: FastifyReply, met: Met | undefined) {
    if (met === undefined) return undefined;
    request.log.info({ fault: met.answer, latencyMs: met.latencyMs, by: met.by }, 'test key fault');
    if (met.latencyMs > 0) await delay(met.latencyMs);
    mark(request, met);
    if (request.forcedRefusal) return refuse(request, reply);
    return answerNow(request, reply);
  }

  function answerNow(request: FastifyRequest, reply: FastifyReply): FastifyReply | undefined {
    const fault = request.fault;
    if (fault?.fault === '503') return sendProblem(reply, publicUrl, injected(storeUnavailable(), fault.by));
    if (fault?.fault === '500') return sendProblem(reply, publicUrl, injected(internalError(), fault.by));
    return undefined;
  }

  /**
   * At the answer: a conditional read's `pass` used once it was counted (unless the count refused it); a `reset`'s
   * answer never sent: the connection is reset instead.
   */
  function atAnswer(request: FastifyRequest, reply: FastifyReply, payload: unknown): unknown {
    const scripted = request.scripted;
    if (scripted?.atAnswer) {
      request.scripted = undefined;
      if (reply.statusCode === 429) return payload;
      return scripted.ahead.use().then(async (met) => {
        if (met && met.latencyMs > 0) await delay(met.latencyMs);
        return payload;
      });
    }
    if (request.fault?.fault !== 'reset') return payload;
    request.raw.socket?.resetAndDestroy();
    request.log.info({ statusCode: reply.statusCode }, 'test key fault: the connection was reset instead of answered');
    return payload;
  }

  /** The phases of a route's requests; `operation`, an API operation's (the steps of a script meet those). */
  const phasesOf = (operation?: string, stream?: boolean): Phases => ({
    onRequest: (request, reply) => planFault(request, reply, operation, stream),
    preValidation: failNow,
    onSend: atAnswer,
  });
  const plain = phasesOf();
  return {
    name: 'faults',
    fields: { fault: undefined, scripted: undefined },
    // Faults meet the requests that count (a test key's request that counts nothing meets none); steps, the API's.
    forRoute: (route) =>
      route.counted === false ? {} : route.api ? phasesOf(operationOf(route), route.stream === true) : plain,
  };
}

/** What a request meets, on the request: a `429` for the limit stage, any other fault for this one. */
function mark(request: FastifyRequest, met: Met): void {
  if (met.answer === '429') request.forcedRefusal = met.by;
  else if (met.answer !== 'pass')
    request.fault = { fault: met.answer, by: met.by, ...(met.dropAfter ? { dropAfter: met.dropAfter } : {}) };
}

/** The real failure's problem, its detail saying it was injected. */
function injected({ slug, detail, extras, headers }: ProblemError, by: string): ProblemError {
  return new ProblemError(slug, `Injected for this test key (${by}): ${detail}`, extras, headers);
}
