import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Clock } from '../clock.js';
import { fieldName } from '../http/field-name.js';
import { ProblemError } from '../http/problems.js';
import type { Stage } from '../http/stages.js';
import type { VersionNotices } from './notices.js';
import type { Shapes } from './shape.js';
import { dayOrInstant, isSunset, type Notice } from '../deprecation/notices.js';
import { callerNow } from '../clock.js';
import { noticeOf } from './notices.js';
import { isVersion, NEWEST_VERSION, VERSION_FIELD, VERSION_HEADER, VERSIONS } from './versions.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The version the answer is shaped in: chosen before the body is read (the versions stage). */
    apiVersion: string;
    /** Why that version refuses the request, if it does: decided once, with the version. */
    versionRefusal: 'unknown' | 'sunset' | undefined;
  }
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
 * The versions stage (docs/versions.md). Before the body is read (`beforeBody`), once the caller is
 * known and counted, the version a request is answered in, and, for an API operation, its refusal: an
 * unknown version, or one past its sunset in the caller's time, refused as any bad request is (counted).
 * Whether the version refuses the request is decided once, at one reading of the clock, so that a request
 * in the sunset's very millisecond is counted and refused in the same version it was told. At the answer,
 * every answer (a `429` of the limit stage answered before the version was chosen too) says its version,
 * carries the deprecation headers of the version and of the operation, and an older version's body is
 * shaped from the newest's.
 */
export function versionStage(clock: Clock, notices: VersionNotices, shapes: Shapes): Stage {
  const { oldest } = notices;
  const choose = (request: FastifyRequest): string => {
    const version = versionOf(request);
    request.versionRefusal = refusalOf(request, version, oldest, clock);
    return (request.apiVersion = version);
  };
  /** An API operation's request, refused in its version; past the sunset, `refusedPastSunset` says whether. */
  const refuse = (refusedPastSunset: boolean) => (request: FastifyRequest) => {
    choose(request);
    if (request.versionRefusal === 'sunset' && !refusedPastSunset) return;
    const refusal = versionRefusal(request, oldest);
    if (refusal) throw refusal;
  };
  /** The answer in its version: the header, the deprecation notices, an older version's shape. */
  const inVersion =
    (deprecation: Notice | undefined) => (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
      // Chosen before the body was read, or not yet: an answer given before that (a 429, a 404, a preflight).
      const version = (request.apiVersion as string | undefined) ?? choose(request);
      reply.header(VERSION, version);
      reply.headers(notices.headers(version, deprecation));
      if (
        version === NEWEST_VERSION ||
        typeof payload !== 'string' ||
        reply.statusCode >= 300 ||
        request.inVersionAlready
      )
        return payload;
      const schema = (request.routeOptions.schema?.response as Record<number, object> | undefined)?.[reply.statusCode];
      const shape = schema && shapes.of(schema, version);
      return shape ? JSON.stringify(shape(JSON.parse(payload))) : payload;
    };
  return {
    name: 'versions',
    fields: { apiVersion: undefined, versionRefusal: undefined, inVersionAlready: false },
    forRoute(route) {
      const onSend = inVersion(route.deprecation);
      if (!route.api) return { onSend };
      // Past the sunset: a route answered in every version goes on, and so does an operation whose own
      // sunset came first (its `410` answers; on a tie, the version's).
      const goesOn =
        route.everyVersion || (route.deprecation !== undefined && route.deprecation.sunsetAt < oldest.sunsetAt);
      return { beforeBody: refuse(!goesOn), onSend };
    },
  };
}
