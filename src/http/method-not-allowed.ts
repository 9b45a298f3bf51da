import { METHODS as NODE_METHODS } from 'node:http';
import type { FastifyInstance, RouteOptions } from 'fastify';
import { notFound } from './errors.js';
import { ProblemError } from './problems.js';
import type { Phases, Stage } from './stages.js';

/**
 * Every method Node's parser lets through to a request handler (`CONNECT` goes to the server's
 * `connect` event instead), so that `TRACE`, `PROPFIND`, `QUERY`… on a known path get their `405`
 * rather than Fastify's `404` for a method it does not route.
 */
export function routeEveryMethod(app: FastifyInstance): void {
  for (const method of NODE_METHODS) {
    if (method !== 'CONNECT' && !app.supportedMethods.includes(method)) app.addHttpMethod(method);
  }
}

/** A route's URL as the OpenAPI document writes its path: `/pets/:petId` is `/pets/{petId}`. */
export function documentPath(url: string): string {
  return url.replace(/:(\w+)/g, '{$1}');
}

/** A route's operation, as the document writes it (`GET /pets/{petId}`). */
export const operationOf = (route: { method?: string | string[]; url?: string }): string =>
  `${[route.method ?? ''].flat().join(',')} ${documentPath(route.url ?? '')}`;

/** The operation a request asked for: its route's, or, for a `HEAD` of a `GET` route, the `HEAD`'s own. */
export const askedOperation = (request: { method: string }, operation: string): string =>
  request.method === 'HEAD' ? `HEAD ${operation.slice(operation.indexOf(' ') + 1)}` : operation;

/** The order `Allow` lists methods in. */
const ALLOW_ORDER = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];
const rank = (method: string) => {
  const i = ALLOW_ORDER.indexOf(method);
  return i === -1 ? ALLOW_ORDER.length : i;
};

/** Collects the methods of every path registered after this call, to answer the others with `405`. */
export function collectRoutes(app: FastifyInstance): Map<string, KnownPath> {
  const byPath = new Map<string, KnownPath>();
  app.addHook('onRoute', (route: RouteOptions) => {
    const known = byPath.get(route.url) ?? { methods: new Set<string>(), counted: true };
    for (const m of [route.method].flat()) known.methods.add(m);
    if ((route.config as { counted?: boolean } | undefined)?.counted === false) known.counted = false;
    byPath.set(route.url, known);
  });
  return byPath;
}

/** A path's methods, and whether its requests count (a path that counts nothing refuses the others alike). */
interface KnownPath {
  methods: Set<string>;
  counted: boolean;
}

/** For each known path, a hidden route that answers every other method with `405` and `Allow`. */
export function registerMethodNotAllowed(app: FastifyInstance, byPath: Map<string, KnownPath>): void {
  const methods = app.supportedMethods;
  for (const [url, { methods: allowed, counted }] of [...byPath]) {
    const others = methods.filter((m) => !allowed.has(m));
    if (others.length === 0) continue;
    const allow = [...allowed].sort((a, b) => rank(a) - rank(b)).join(', ');
    const path = documentPath(url);
    app.route({
      method: others,
      url,
      config: { counted, notAllowed: { path, allow } },
      schema: { hide: true },
      handler: async () => {
        throw new Error('unreachable: the routing stage refuses every request of this route');
      },
    });
  }
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** A route that only refuses its methods (`registerMethodNotAllowed`): the path as written, and `Allow`. */
    notAllowed?: { path: string; allow: string };
  }
}

/**
 * The routing stage: what no route answers is a `404`, and a method a path does not take a `405` with
 * `Allow`, both before the body is read (no body can turn them into a `400` or a `415`), after the request
 * is counted (they carry its headers).
 */
export const routingStage: Stage = {
  name: 'routing',
  forRoute(route): Phases {
    if (route.unrouted) return NOT_FOUND;
    const notAllowed = route.notAllowed;
    if (!notAllowed) return {};
    const { path, allow } = notAllowed;
    return {
      onRequest(request) {
        throw new ProblemError(
          'method-not-allowed',
          `${path} does not support ${request.method}. Allowed: ${allow}.`,
          {},
          { allow },
        );
      },
    };
  },
};

const NOT_FOUND: Phases = {
  onRequest(request) {
    throw notFound(request);
  },
};
