import type { FastifyRequest } from 'fastify';
import type { Clock } from '../clock.js';
import { fieldName } from '../http/field-name.js';
import { ProblemError } from '../http/problems.js';
import type { Step } from '../http/steps.js';
import { dayOrInstant, isSunset, type Notice } from '../deprecation/notices.js';
import { callerNow } from '../clock.js';
import { noticeOf } from './notices.js';
import { isVersion, NEWEST_VERSION, VERSION_FIELD, VERSION_HEADER, VERSIONS } from './versions.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * The route answers in every version, past its sunset too (a test
     * key's clock, test-mode/): `refuseVersion` lets it through.
     */
    everyVersion?: boolean;
  }
}

const VERSION = fieldName(VERSION_HEADER);

/**
 * The version a request is answered in: the one it names, else its
 * key's, else the newest. An unknown one: the newest shapes its `400`.
 */
function versionOf(request: Pick<FastifyRequest, 'headers' | 'identity'>): string {
  const sent = request.headers[VERSION_FIELD];
  if (sent !== undefined) return isVersion(sent) ? sent : NEWEST_VERSION;
  return request.identity.kind === 'key' ? request.identity.key.apiVersion : NEWEST_VERSION;
}

/** The `400` for a version that is none of the API's, named where it was sent. */
export function unknownVersion(where: string): ProblemError {
  return new ProblemError(
    'unknown-version',
    `${where} names no version of the API: send one of ${VERSIONS.join(', ')}.`,
    { versions: [...VERSIONS] },
  );
}

/**
 * Why an API request is refused in the version it is answered in: an unknown version sent, or one past
 * its sunset in the caller's time (a test key's clock, test-mode/; the clock read only then).
 */
function refusalOf(
  request: Pick<FastifyRequest, 'headers' | 'identity'>,
  version: string,
  oldest: Notice,
  clock: Clock,
): 'unknown' | 'sunset' | undefined {
  const sent = request.headers[VERSION_FIELD];
  if (sent !== undefined && !isVersion(sent)) return 'unknown';
  if (noticeOf(version, oldest) && isSunset(oldest, callerNow(request.identity.clock, clock()))) return 'sunset';
  return undefined;
}

/** The problem that refuses an API request in its version, if one does (`refusalOf`, as `chooseVersion` found it). */
function versionRefusal(
  request: Pick<FastifyRequest, 'apiVersion' | 'versionRefusal'>,
  oldest: Notice,
): ProblemError | undefined {
  const refusal = request.versionRefusal;
  if (refusal === 'unknown') return unknownVersion(VERSION_HEADER);
  if (refusal === 'sunset') {
    return new ProblemError(
      'version-sunset',
      `Version ${request.apiVersion} reached its sunset on ${dayOrInstant(oldest.sunsetAt)} and no longer answers: ` +
        `move to ${NEWEST_VERSION}.`,
    );
  }
  return undefined;
}

/**
 * The two steps of versions. `chooseVersion`, once the caller is known and before anything is counted,
 * so that every response says its version (a `429` too); `refuseVersion`, for API operations once the
 * key is required, so that a refusal is counted as any bad request is.
 *
 * Whether the version refuses the request is decided once, by `chooseVersion`, at one reading of the
 * clock, and `refuseVersion` acts on that decision: a request in the sunset's very millisecond is
 * counted and refused in the same version it was told.
 */
export function versionSteps(clock: Clock, oldest: Notice): { chooseVersion: Step; refuseVersion: Step } {
  return {
    chooseVersion: function chooseVersion(request, reply) {
      const version = versionOf(request);
      request.versionRefusal = refusalOf(request, version, oldest, clock);
      request.apiVersion = version;
      reply.header(VERSION, version);
    },
    refuseVersion: function refuseVersion(request) {
      // Past the sunset: a route answered in every version goes on, and so does an operation whose own
      // sunset came first (its `410` answers; on a tie, the version's).
      const config = request.routeOptions.config;
      if (
        request.versionRefusal === 'sunset' &&
        (config?.everyVersion || (config?.deprecation && config.deprecation.sunsetAt < oldest.sunsetAt))
      )
        return;
      const refusal = versionRefusal(request, oldest);
      if (refusal) throw refusal;
    },
  };
}
