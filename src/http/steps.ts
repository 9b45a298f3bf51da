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
 * promise, then after it. Throws (or rejects with) what a step throws. Fastify runs the first steps
 * through this as one hook (`inOrder`), and the API's `requireKey` as another (`stepHook`).
 */
export function runSteps(
  steps: readonly Step[],
  request: FastifyRequest,
  reply: FastifyReply,
  from = 0,
): FastifyReply | undefined | Promise<FastifyReply | undefined> {
  for (let i = from; i < steps.length; i++) {
    const answered = steps[i]!(request, reply);
    if (answered instanceof Promise) return answered.then((value) => (reply.sent || value === reply ? reply : runSteps(steps, request, reply, i + 1)));
    // A step that answered returns the reply, which may not count as sent yet (an asynchronous `onSend`).
    if (reply.sent || answered === reply) return reply;
  }
  return undefined;
}

/**
 * The steps as one Fastify hook: each hook Fastify runs costs a promise and a turn of its hook runner,
 * and these run on every request, refusals first of all.
 */
export function inOrder(steps: readonly Step[]) {
  const firstSteps = async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> => {
    const answered = await runSteps(steps, request, reply);
    if (answered === undefined || reply.sent) return answered && reply;
    return ended(reply);
  };
  // Named after its steps, so that Fastify's list of a route's hooks (`printRoutes`) shows each.
  return Object.defineProperty(firstSteps, 'name', { value: `firstSteps:${steps.map((step) => step.name).join(',')}` });
}

/**
 * Steps that may answer, as one Fastify hook of the callback kind after `onRequest` (once the body is
 * read): no promise where no step makes one, and no `done` once a step answered, so that Fastify never
 * goes on to the route, even while an asynchronous `onSend` step still holds the answer.
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

/**
 * A step as a Fastify hook of the callback kind, for a scope of its own (the API's `requireKey`): no
 * promise where the step needs none.
 */
export function stepHook(step: Step) {
  const hook = (request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void): void => {
    let answered: unknown;
    try {
      answered = step(request, reply);
    } catch (error) {
      return done(error as Error);
    }
    if (answered instanceof Promise) answered.then(() => done(), done);
    else done();
  };
  return Object.defineProperty(hook, 'name', { value: step.name });
}

/**
 * Waits for an answer a step gave to be out. Fastify goes on to the route once its hooks are done
 * unless the answer has ended, and an answer whose route has an asynchronous `onSend` step (a
 * conditional read's, http/conditional.ts) has not ended yet: the route would answer a second time
 * (fastify/fastify#4374).
 */
function ended(reply: FastifyReply): Promise<FastifyReply> {
  return new Promise((resolve) => {
    if (reply.raw.writableFinished || reply.raw.destroyed) return resolve(reply);
    const done = () => resolve(reply);
    reply.raw.once('finish', done).once('close', done);
  });
}
