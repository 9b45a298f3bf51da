import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Clock } from '../clock.js';
import { oldestVersionNotice, VersionNotices } from './notices.js';
import { Shapes } from './shape.js';
import { versionSteps } from './step.js';
import { NEWEST_VERSION } from './versions.js';

export interface VersioningDeps {
  clock: Clock;
  publicUrl: string;
  /** OLDEST_VERSION_SUNSET_AT. */
  oldestSunsetAt: Date;
  /** The schemas with an `$id` the routes refer to: where the records of answers are found. */
  named: readonly object[];
}

/**
 * Versions at the edge (docs/versions.md), for both entrances: the steps that choose and refuse a version,
 * the deprecation headers, and the shaping of an older version's answers from the newest's.
 */
export function versioning({ clock, publicUrl, oldestSunsetAt, named }: VersioningDeps) {
  const notices = new VersionNotices(oldestVersionNotice(oldestSunsetAt), publicUrl);
  const shapes = new Shapes(named);
  return {
    notices,
    shapes,
    ...versionSteps(clock, notices.oldest),
    /**
     * Fastify's hook on every answer, before the route's own (its `ETag`): the deprecation headers of
     * the version and the operation, and an older version's body shaped from the newest's.
     */
    inVersion(
      request: FastifyRequest,
      reply: FastifyReply,
      payload: unknown,
      done: (error: null, payload: unknown) => void,
    ): void {
      const version = request.apiVersion ?? NEWEST_VERSION;
      reply.headers(notices.headers(version, request.routeOptions.config.deprecation));
      if (
        version !== NEWEST_VERSION &&
        typeof payload === 'string' &&
        reply.statusCode < 300 &&
        !request.inVersionAlready
      ) {
        const schema = (request.routeOptions.schema?.response as Record<number, object> | undefined)?.[
          reply.statusCode
        ];
        const shape = schema && shapes.of(schema, version);
        if (shape) return done(null, JSON.stringify(shape(JSON.parse(payload))));
      }
      done(null, payload);
    },
  };
}

export type Versioning = ReturnType<typeof versioning>;

declare module 'fastify' {
  interface FastifyRequest {
    /**
     * Set when the answer's body is already in its version (an
     * answer held in memory as it was made): `inVersion` leaves it.
     */
    inVersionAlready: boolean;
  }
}

/** Says that the request's answer is already in its version, so that it is not shaped a second time. */
export function answeredInVersion(request: FastifyRequest): void {
  request.inVersionAlready = true;
}
