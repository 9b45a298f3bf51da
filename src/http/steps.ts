import type { FastifyReply, FastifyRequest } from 'fastify';

declare module 'fastify' {
  interface FastifyRequest {
    /** The version the answer is shaped in (versions/). */
    apiVersion: string;
    /** Why that version refuses the request, if it does: decided once, with the version (versions/step.ts). */
    versionRefusal: 'unknown' | 'sunset' | undefined;
  }
}

/** Sets each of `values` on the reply. */
export function setHeaders(reply: FastifyReply, values: Readonly<Record<string, string>>): FastifyReply {
  for (const name in values) reply.header(name, values[name]!);
  return reply;
}

/**
 * One of the steps every request passes: it may answer by itself (a 429, a preflight), and then
 * returns the reply; or throw a problem; or return a promise of either.
 */
export type Step = (request: FastifyRequest, reply: FastifyReply) => unknown;

/**
 * Runs `steps` in order until one answers (the reply is sent): synchronously until a step returns a
 * promise, then after it. Throws (or rejects with) what a step throws. Fastify runs the steps through
 * this, as hooks (`answeringHook`): the first steps of every request, and the API's.
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
 * Steps that may answer, as one Fastify hook of the callback kind (`onRequest`, `preValidation`): each
 * hook Fastify runs costs a turn of its hook runner, so a list is one hook; no promise where no step
 * makes one, and no `done` once a step answered, so that Fastify never goes on to the route, even
 * while an asynchronous `onSend` step still holds the answer: Fastify would answer a second time.
 */
export function answeringHook(name: string, steps: readonly Step[]) {
  const hook = (request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void): void => {
    let answered: ReturnType<typeof runSteps>;
    try {
      answered = runSteps(steps, request, reply);
    } catch (error) {
      return done(error as Error);
    }
    if (answered instanceof Promise) answered.then((value) => value === undefined && !reply.sent && done(), done);
    else if (answered === undefined && !reply.sent) done();
  };
  return Object.defineProperty(hook, 'name', { value: name });
}
