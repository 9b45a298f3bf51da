import type { FastifyInstance, RouteOptions } from 'fastify';
import { ProblemError } from './problems.js';

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;

/** Collects the methods of every path registered after this call, to answer the others with `405`. */
export function collectRoutes(app: FastifyInstance): Map<string, Set<string>> {
  const byPath = new Map<string, Set<string>>();
  app.addHook('onRoute', (route: RouteOptions) => {
    const methods = byPath.get(route.url) ?? new Set<string>();
    for (const m of [route.method].flat()) methods.add(m);
    byPath.set(route.url, methods);
  });
  return byPath;
}

/** For each known path, a hidden route that answers every other method with `405` and `Allow`. */
export function registerMethodNotAllowed(app: FastifyInstance, byPath: Map<string, Set<string>>): void {
  for (const [url, allowed] of [...byPath]) {
    const others = METHODS.filter((m) => !allowed.has(m));
    if (others.length === 0) continue;
    const allow = METHODS.filter((m) => allowed.has(m)).join(', ');
    const path = url.replace(/:(\w+)/g, '{$1}');
    app.route({
      method: others,
      url,
      schema: { hide: true },
      // Refused before the body is read: no body can turn a 405 into a 400 or 415.
      onRequest: async (request) => {
        throw new ProblemError('method-not-allowed', `${path} does not support ${request.method}. Allowed: ${allow}.`, {}, { allow });
      },
      handler: async () => {
        throw new Error('unreachable: onRequest always refuses');
      },
    });
  }
}
