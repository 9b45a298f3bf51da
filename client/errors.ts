/**
 * One error class per problem type the service sends (its `code`, the slug `type` ends in:
 * `/problems/<slug>`), so callers can `catch` by `instanceof` and read the members each problem carries.
 */
import type { components } from './generated/schema.js';
import type { RateLimitState } from './rate-limit.js';

export type Problem = components['schemas']['Problem'];
export type ValidationProblem = components['schemas']['ValidationProblem'];
export type RateLimitedProblem = components['schemas']['RateLimitedProblem'];
export type BannedProblem = components['schemas']['BannedProblem'];
export type InsufficientScopeProblem = components['schemas']['InsufficientScopeProblem'];
export type InputError = ValidationProblem['errors'][number];

export interface ErrorInit {
  status: number;
  /** The problem body; undefined when the client refused without sending (see `RateLimitedError`). */
  problem?: Problem;
  requestId?: string;
  rateLimit?: RateLimitState;
  retryAfter?: number;
}

/** Any error answer of the service. */
export class PetstoreError extends Error {
  readonly status: number;
  readonly problem: Problem | undefined;
  /** Quote it when you report a problem. */
  readonly requestId: string | undefined;
  readonly rateLimit: RateLimitState | undefined;

  constructor(message: string, init: ErrorInit) {
    super(message);
    this.name = new.target.name;
    this.status = init.status;
    this.problem = init.problem;
    this.requestId = init.requestId;
    this.rateLimit = init.rateLimit;
  }
}

/** The request could not reach the service, or its answer never arrived. */
export class NetworkError extends Error {
  override readonly name = 'NetworkError';
}

export class ValidationError extends PetstoreError {
  /** Every invalid input: `{in, name, message}`. */
  get errors(): InputError[] {
    return (this.problem as ValidationProblem | undefined)?.errors ?? [];
  }
}
export class UnauthorizedError extends PetstoreError {}
/**
 * The access token was refused (`WWW-Authenticate: Bearer error="invalid_token"`): expired in the key's time,
 * not the service's, or of a revoked key. A client with `clientId` and `clientSecret` renews its token once and
 * sends the call again with the new one; this is thrown when the new one was refused too.
 */
export class InvalidTokenError extends UnauthorizedError {}
export class NotFoundError extends PetstoreError {}
export class MethodNotAllowedError extends PetstoreError {}
export class ConflictError extends PetstoreError {}
export class PetNotAvailableError extends ConflictError {}
export class OrderNotCancellableError extends ConflictError {}
/** A `delivered` or `cancelled` order: `advanceOrder` has no step left to take. */
export class OrderNotAdvanceableError extends ConflictError {}
export class ForbiddenError extends PetstoreError {}
/** The access token lacks the scope the operation needs: `scope` names it (the client's `scope` option asks for it). */
export class InsufficientScopeError extends ForbiddenError {
  get scope(): string | undefined {
    const scope = (this.problem as InsufficientScopeProblem | undefined)?.scope;
    return typeof scope === 'string' ? scope : undefined;
  }
}
/**
 * A test-mode operation (`advanceOrder`, the test clock, `resetTestData`)
 * with a live key: only test keys (`pet_test_…`) have them.
 */
export class TestKeyRequiredError extends ForbiddenError {}
/** `testClock.advance` to an instant before the key's now: a test key's clock only moves forward. */
export class ClockCannotGoBackError extends ConflictError {}
/** A 101st child test key alive: delete some (`deleteTestKey`) or reset (`resetTestData`). */
export class TestKeyLimitError extends ConflictError {}
/** An 11th webhook endpoint: a key has at most 10. */
export class WebhookEndpointLimitError extends ConflictError {}
/** A 6th open event stream of the key (`events.stream()`): close one (stop iterating another) first. */
export class StreamLimitError extends ConflictError {}
/**
 * `events.stream()` asked to resume after an event the service does not keep (not the key's, or past the retention
 * period): follow it from now on (no `after`), and catch up with `events()`.
 */
export class EventIdUnknownError extends ValidationError {}
/** The operation reached its sunset date and answers no more. */
export class SunsetError extends PetstoreError {}
/** The API version asked for (or the key's pinned one) reached its sunset: move to a newer version. */
export class VersionSunsetError extends SunsetError {}
/** `Petstore-Version` named no version of the API; `versions` lists those there are. */
export class UnknownVersionError extends ValidationError {
  get versions(): string[] {
    return ((this.problem as { versions?: string[] } | undefined)?.versions ?? []).slice();
  }
}
export class RequestTimeoutError extends PetstoreError {}
/** The request carried an `Expect` header other than `100-continue`. */
export class ExpectationFailedError extends PetstoreError {}
export class PayloadTooLargeError extends PetstoreError {}
export class HeadersTooLargeError extends PetstoreError {}
export class UnsupportedMediaTypeError extends PetstoreError {}
export class IdempotencyKeyReusedError extends PetstoreError {}
/** The original request with this Idempotency-Key is still being processed: retry in a moment. */
export class IdempotencyKeyInProgressError extends ConflictError {}
export class InternalServerError extends PetstoreError {}

/** A 429 of either kind; `retryAfter` is the seconds to wait before sending again. */
export class TooManyRequestsError extends PetstoreError {
  readonly retryAfter: number;

  constructor(message: string, init: ErrorInit) {
    super(message, init);
    // A 429 without any hint still means "not now": wait a second rather than not at all.
    this.retryAfter = init.retryAfter ?? numberMember(init.problem, 'retryAfter') ?? 1;
  }
}

/**
 * The request exceeds a limit of the plan. Without a `problem`, the client refused it itself because the
 * wait the server asked for is longer than `maxWaitMs`: nothing was sent.
 */
export class RateLimitedError extends TooManyRequestsError {
  get window(): RateLimitedProblem['window'] | undefined {
    return (this.problem as RateLimitedProblem | undefined)?.window;
  }
  get limit(): number | undefined {
    return numberMember(this.problem, 'limit');
  }
  get plan(): RateLimitedProblem['plan'] | undefined {
    return (this.problem as RateLimitedProblem | undefined)?.plan;
  }
}

/**
 * A path that counts nothing toward the plan (a test key's clock, `/usage`, the document…) was asked for more
 * often than its own throttle allows, for this key (or address): wait `retryAfter`. Never a ban.
 */
export class UncountedThrottledError extends TooManyRequestsError {
  get window(): 'minute' | 'day' | undefined {
    return (this.problem as { window?: 'minute' | 'day' } | undefined)?.window;
  }
  get limit(): number | undefined {
    return numberMember(this.problem, 'limit');
  }
}

/** The client address held too many connections at once; this one was closed before any request was read. */
export class TooManyConnectionsError extends TooManyRequestsError {}

/**
 * A connection from the client address sent many pipelined requests without
 * reading the answers: its connections are refused for `retryAfter` seconds.
 */
export class PipeliningFloodError extends TooManyRequestsError {}

/** The key is banned for a while for sending after 429s. Without a `problem`, the client did not send. */
export class BannedError extends TooManyRequestsError {
  get bannedUntil(): Date | undefined {
    const until = (this.problem as BannedProblem | undefined)?.bannedUntil;
    return until === undefined ? undefined : new Date(until);
  }
}

export class ServiceUnavailableError extends PetstoreError {
  get retryAfter(): number | undefined {
    return this.rateLimit?.retryAfterSeconds;
  }
}

type ErrorClass = new (message: string, init: ErrorInit) => PetstoreError;

/** Every problem slug of the service and its class; a test checks it against the server's list. */
export const PROBLEM_ERRORS = {
  'invalid-request': ValidationError,
  unauthorized: UnauthorizedError,
  'invalid-token': InvalidTokenError,
  'insufficient-scope': InsufficientScopeError,
  'not-found': NotFoundError,
  'method-not-allowed': MethodNotAllowedError,
  'pet-not-available': PetNotAvailableError,
  'order-not-cancellable': OrderNotCancellableError,
  'order-not-advanceable': OrderNotAdvanceableError,
  'test-key-required': TestKeyRequiredError,
  'clock-cannot-go-back': ClockCannotGoBackError,
  'test-key-limit': TestKeyLimitError,
  'webhook-endpoint-limit': WebhookEndpointLimitError,
  'stream-limit': StreamLimitError,
  'event-id-unknown': EventIdUnknownError,
  sunset: SunsetError,
  'unknown-version': UnknownVersionError,
  'version-sunset': VersionSunsetError,
  'request-timeout': RequestTimeoutError,
  'expectation-failed': ExpectationFailedError,
  'payload-too-large': PayloadTooLargeError,
  'headers-too-large': HeadersTooLargeError,
  'unsupported-media-type': UnsupportedMediaTypeError,
  'idempotency-key-reused': IdempotencyKeyReusedError,
  'idempotency-key-in-progress': IdempotencyKeyInProgressError,
  'too-many-connections': TooManyConnectionsError,
  'pipelining-flood': PipeliningFloodError,
  'rate-limited': RateLimitedError,
  'uncounted-throttled': UncountedThrottledError,
  'key-banned': BannedError,
  'internal-error': InternalServerError,
  'service-unavailable': ServiceUnavailableError,
} as const satisfies Record<string, ErrorClass>;

/** For answers without a known problem type (a proxy's error page, say). */
const BY_STATUS: Record<number, ErrorClass> = {
  400: ValidationError,
  401: UnauthorizedError,
  403: ForbiddenError,
  404: NotFoundError,
  409: ConflictError,
  410: SunsetError,
  429: RateLimitedError,
  500: InternalServerError,
  503: ServiceUnavailableError,
};

/** The typed error of an error response; reads the body. */
export async function errorFrom(response: Response, rateLimit: RateLimitState): Promise<PetstoreError> {
  const body = await jsonOf(response);
  const problem = isProblem(body) ? body : undefined;
  // `code` is the slug; `type`'s last segment says the same (an answer from before `code`, or a proxy's).
  const slug = problem?.code ?? problem?.type.match(/\/problems\/([^/?#]+)$/)?.[1];
  const ErrorOf: ErrorClass =
    (slug && (PROBLEM_ERRORS as Record<string, ErrorClass>)[slug]) || BY_STATUS[response.status] || PetstoreError;
  // The token endpoint refuses in OAuth's words (RFC 6749 §5.2), not with a problem: `invalid_client: …`.
  const oauth = isOAuthError(body) ? `${body.error}: ${body.error_description ?? ''}` : undefined;
  const message = problem ? `${problem.title}: ${problem.detail}` : (oauth ?? `HTTP ${response.status}`);
  const requestId = response.headers.get('x-request-id') ?? undefined;
  return new ErrorOf(message, {
    status: response.status,
    problem,
    requestId,
    rateLimit,
    retryAfter: rateLimit.retryAfterSeconds,
  });
}

async function jsonOf(response: Response): Promise<unknown> {
  if (!/json/.test(response.headers.get('content-type') ?? '')) return undefined;
  return response.json().catch(() => undefined);
}

const isProblem = (body: unknown): body is Problem =>
  typeof body === 'object' && body !== null && typeof (body as Problem).type === 'string';

const isOAuthError = (body: unknown): body is { error: string; error_description?: string } =>
  typeof body === 'object' && body !== null && typeof (body as { error?: unknown }).error === 'string';

function numberMember(problem: Problem | undefined, name: string): number | undefined {
  const value = problem?.[name];
  return typeof value === 'number' ? value : undefined;
}
