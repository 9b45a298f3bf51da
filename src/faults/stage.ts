import { setTimeout as delay } from 'node:timers/promises';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { internalError, sendProblem, storeUnavailable } from '../http/errors.js';
import { ProblemError } from '../http/problems.js';
import type { Phases, Stage } from '../http/stages.js';
import type { FaultDraws } from './draws.js';
import { appliedPreferences, PREFERENCE_APPLIED_HEADER, parsePrefer } from './prefer.js';
import type { Fault } from './profile.js';

const PREFER_FIELD = 'prefer';

declare module 'fastify' {
  interface FastifyRequest {
    /** The fault this test key's request meets, and what asked for it. */
    fault: { fault: Exclude<Fault, '429'>; by: string } | undefined;
  }
}

/**
 * Test keys that misbehave on demand. Every request of a test key that counts toward its limits may
 * meet a fault, asked for with `Prefer` or drawn from the key's profile (./draws.ts), and each
 * behaves as the real one would:
 *
 * - `latency`: the request waits before anything else happens to it, whatever its answer;
 * - `429`: refused by the limiter as if its windows were full (./ratelimit/store.ts `refuse`): real
 *   headers, `Retry-After`, and the rejection counts toward a ban;
 * - `503` and `500`: admitted and counted, then answered as a store outage or a failure would be,
 *   once the body is read and before it is validated (so that the report card knows a repeat of it);
 * - `reset`: handled in full (an order is placed), then the connection is reset instead of answered:
 *   the lost answer that `Idempotency-Key` exists for.
 *
 * A live key's preferences are ignored; `Preference-Applied` names those applied.
 */
export function faultsStage(publicUrl: string, draws: FaultDraws): Stage {
  /** Before the limit stage: which fault, if any; the wait, now. */
  function planFault(request: FastifyRequest, reply: FastifyReply): Promise<void> | undefined {
    const identity = request.identity;
    if (identity.kind !== 'key' || !identity.key.test) return undefined;
    const sent = request.headers[PREFER_FIELD];
    const asked = parsePrefer(Array.isArray(sent) ? sent.join(', ') : sent);
    // The profile draws for every request, asked for or not: its n-th request meets its n-th draw.
    const drawn = identity.key.faults ? draws.next(identity.key.id, identity.key.faults) : undefined;
    const applied = appliedPreferences(asked);
    if (applied) reply.header(PREFERENCE_APPLIED_HEADER, applied);
    const fault = asked.fault ?? drawn?.fault;
    const latencyMs = asked.latencyMs ?? drawn?.latencyMs ?? 0;
    if (fault === undefined && latencyMs === 0) return undefined;
    const by = asked.fault ? `Prefer: fault=${asked.fault}` : 'its fault profile';
    request.log.info({ fault, latencyMs, by }, 'test key fault');
    if (fault === '429') request.forcedRefusal = by;
    else if (fault) request.fault = { fault, by };
    return latencyMs > 0 ? delay(latencyMs).then(() => undefined) : undefined;
  }

  /**
   * Once the request is admitted and its body read (`preValidation`): a `503` or a `500` here, in place of the route.
   */
  function failNow(request: FastifyRequest, reply: FastifyReply): FastifyReply | undefined {
    const fault = request.fault;
    if (fault?.fault === '503') return sendProblem(reply, publicUrl, injected(storeUnavailable(), fault.by));
    if (fault?.fault === '500') return sendProblem(reply, publicUrl, injected(internalError(), fault.by));
    return undefined;
  }

  /** At the answer: the answer of a `reset` is never sent; the connection is reset instead (and so no access line follows). */
  function resetInstead(request: FastifyRequest, reply: FastifyReply, payload: unknown): unknown {
    if (request.fault?.fault !== 'reset') return payload;
    request.raw.socket?.resetAndDestroy();
    request.log.info({ statusCode: reply.statusCode }, 'test key fault: the connection was reset instead of answered');
    return payload;
  }

  const phases: Phases = { onRequest: planFault, preValidation: failNow, onSend: resetInstead };
  // Faults meet the requests that count: a test key's request that counts nothing meets none.
  return { name: 'faults', fields: { fault: undefined }, forRoute: (route) => (route.counted === false ? {} : phases) };
}

/** The real failure's problem, its detail saying it was injected. */
function injected({ slug, detail, extras, headers }: ProblemError, by: string): ProblemError {
  return new ProblemError(slug, `Injected for this test key (${by}): ${detail}`, extras, headers);
}
