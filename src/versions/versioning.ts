import type { FastifyRequest } from 'fastify';
import type { Clock } from '../clock.js';
import { oldestVersionNotice, VersionNotices } from './notices.js';
import { Shapes } from './shape.js';
import { versionStage } from './stage.js';

export interface VersioningDeps {
  clock: Clock;
  publicUrl: string;
  /** OLDEST_VERSION_SUNSET_AT. */
  oldestSunsetAt: Date;
  /** The schemas with an `$id` the routes refer to: where the records of answers are found. */
  named: readonly object[];
}

/**
 * Versions at the edge (docs/versions.md): their notices (deprecation headers), the shaping of an older
 * version's answers from the newest's, and the stage that chooses, refuses and shapes (./stage.ts).
 */
export function versioning({ clock, publicUrl, oldestSunsetAt, named }: VersioningDeps) {
  const notices = new VersionNotices(oldestVersionNotice(oldestSunsetAt), publicUrl);
  const shapes = new Shapes(named);
  return { notices, shapes, stage: versionStage(clock, notices, shapes) };
}

export type Versioning = ReturnType<typeof versioning>;

declare module 'fastify' {
  interface FastifyRequest {
    /**
     * Set when the answer's body is already in its version (an answer
     * held in memory as it was made): the versions stage leaves it.
     */
    inVersionAlready: boolean;
  }
}

/** Says that the request's answer is already in its version, so that it is not shaped a second time. */
export function answeredInVersion(request: FastifyRequest): void {
  request.inVersionAlready = true;
}
