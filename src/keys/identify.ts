import type { FastifyRequest } from 'fastify';
import { ProblemError } from '../http/problems.js';
import type { Caller } from '../ratelimit/stage.js';
import type { Phases, Stage } from '../http/stages.js';
import { addressCaller, keyCaller } from '../ratelimit/callers.js';
import { ANONYMOUS_POLICY } from '../ratelimit/plans.js';
import { isWellFormedKey } from './key-format.js';
import { type KeyRecord, policyOfKey } from './repository.js';
import { type Clock, type KeyClock, keyNow } from '../clock.js';

/** The header a key travels in, as documented; Node hands header names over in lower case. */
export const API_KEY_HEADER = 'X-API-Key';
const API_KEY_FIELD = API_KEY_HEADER.toLowerCase();
/** Where an access token travels (RFC 6750 §2.1). */
export const AUTHORIZATION_HEADER = 'Authorization';
/**
 * The token of an `Authorization: Bearer <token>` (the scheme in any case), or undefined. What follows the scheme is
 * taken as it is: anything but a token this service issued is refused by the token check (oauth/tokens.ts).
 */
function bearerTokenOf(authorization: string): string | undefined {
  if (authorization.length < 8) return undefined;
  if (!authorization.startsWith('Bearer ') && authorization.slice(0, 7).toLowerCase() !== 'bearer ') return undefined;
  return authorization.slice(7);
}
/** RFC 6750 §3's challenge, on every answer that refuses a token. */
export const WWW_AUTHENTICATE_HEADER = 'WWW-Authenticate';

/** What a genuine access token says, once its signature is checked (oauth/tokens.ts). */
export interface TokenClaims {
  keyId: string;
  scopes: ReadonlySet<string>;
  /** When it expires, in its key's time (ms). */
  expiresAt: number;
  /** When it dies in real time, whatever its key's clock says (ms). */
  diesAt: number;
  /** What the report card keeps of it: a hash. */
  digest: string;
}

/** What a token says, or, for a token that is none of the service's, why (oauth/tokens.ts). */
export type CheckToken = (token: string) => TokenClaims | string | Promise<TokenClaims | string>;

/** A request's access token, once it is known to be its key's: what it may do, and whether it expired. */
export interface HeldToken {
  digest: string;
  scopes: ReadonlySet<string>;
  /** Why it is refused, when it expired; else undefined. */
  expired: string | undefined;
}

/**
 * Who is calling. A valid key is its own caller; anything else (no key, a malformed, unknown or
 * revoked one) is counted per client address under the anonymous policy, which throttles guessing.
 * A key sent that is malformed, unknown or revoked is counted against the address on every path;
 * so is a token that is not the service's. A genuine token is its key's request, expired or not.
 */
export type Identity = Caller &
  ({ kind: 'key'; key: KeyRecord; token?: HeldToken } | { kind: 'anonymous'; reason: string; failure?: unknown });

declare module 'fastify' {
  interface FastifyRequest {
    identity: Identity;
  }
}

/** Finds a well-formed key's record, from memory when it can (keys/key-cache.ts). */
export type FindKey = (key: string) => KeyRecord | undefined | Promise<KeyRecord | undefined>;

/** How a request may show whose it is besides `X-API-Key`: an access token, and its key found by its id. */
export interface Bearers {
  check: CheckToken;
  findKeyById: FindKey;
  /** The service's clock: the real time a token dies in. */
  clock: Clock;
}

const NO_KEY =
  `Send your API key in the ${API_KEY_HEADER} header, or an access token from POST /oauth/token in ` +
  `${AUTHORIZATION_HEADER}: Bearer.`;
const MALFORMED = `The ${API_KEY_HEADER} header does not hold a key of the form pet_….`;
const NOT_BEARER = `The ${AUTHORIZATION_HEADER} header holds no Bearer token.`;
const BOTH = `Send ${API_KEY_HEADER} or ${AUTHORIZATION_HEADER}: Bearer, not both.`;

/** A test key's clock, read from the store at each of its requests (test-mode/clocks.ts). */
export type ClockOf = (keyId: string) => KeyClock | Promise<KeyClock>;

/**
 * The identify stage: who is calling, first of all (the limit stage counts the request to it); and, for an
 * API operation, once the request is counted, that the caller has a valid key (`requireKey`, before the body
 * is read) and, with a token, the scope the operation needs. The token endpoint's caller is known from its
 * client credentials (oauth/client-stage.ts), not here.
 */
export function identifyStage(findKey: FindKey, clockOf: ClockOf, bearers: Bearers): Stage {
  const identify = identifyHook(findKey, clockOf, bearers);
  const everywhere: Phases = { onRequest: identify };
  return {
    name: 'identify',
    fields: { identity: undefined },
    forRoute(route) {
      if (route.clientCredentials) return {};
      return route.api ? { onRequest: identify, beforeBody: requireKey(route.scope) } : everywhere;
    },
  };
}

/**
 * Who is calling. Synchronous when the key is known in memory; a test key's clock is read at each of its
 * requests, so that a move made through any instance holds at once.
 */
function identifyHook(findKey: FindKey, clockOf: ClockOf, bearers: Bearers) {
  return function identify(request: FastifyRequest): Promise<void> | undefined {
    const sent = request.headers[API_KEY_FIELD];
    const authorization = request.headers.authorization;
    if (authorization !== undefined) {
      if (sent !== undefined) return void (request.identity = anonymous(request, BOTH, false));
      const token = bearerTokenOf(authorization);
      if (token === undefined) return void (request.identity = anonymous(request, NOT_BEARER, true));
      return identifyBearer(request, token, clockOf, bearers);
    }
    if (sent === undefined || sent === '') return void (request.identity = anonymous(request, NO_KEY, false));
    if (typeof sent !== 'string' || !isWellFormedKey(sent))
      return void (request.identity = anonymous(request, MALFORMED, true));
    let found: ReturnType<FindKey>;
    try {
      found = findKey(sent);
    } catch (failure) {
      return unchecked(request, failure);
    }
    if (!(found instanceof Promise)) return identifyAs(request, identityOf(request, found), clockOf);
    return found.then((key) => identifyAs(request, identityOf(request, key), clockOf), unchecked.bind(null, request));
  };
}

/**
 * The store is down (or failing): the request is still limited, per address, and carries the headers;
 * `requireKey` then answers with the failure (a 503 when the store cannot be reached).
 */
function unchecked(request: FastifyRequest, failure: unknown): undefined {
  request.identity = anonymous(request, 'The API key could not be checked.', false, failure);
  return undefined;
}

/** A request with a token: its key's, once the token and the key are checked and its clock read. */
function identifyBearer(
  request: FastifyRequest,
  token: string,
  clockOf: ClockOf,
  bearers: Bearers,
): Promise<void> | undefined {
  const withClaims = (claims: TokenClaims | string): Promise<void> | undefined => {
    // Not the service's: counted against the address, like a key nobody created.
    if (typeof claims === 'string')
      return void (request.identity = anonymous(request, claims, true, invalidToken(claims)));
    const withKey = (key: KeyRecord | undefined): Promise<void> | undefined => {
      const identity = key && keyIdentity(key);
      if (identity === undefined || identity.key.id !== claims.keyId) {
        const why = 'The access token belongs to a key that was revoked.';
        return void (request.identity = anonymous(request, why, true, invalidToken(why)));
      }
      return identifyAs(request, identity, clockOf, claims, bearers.clock());
    };
    let found: ReturnType<FindKey>;
    try {
      found = bearers.findKeyById(claims.keyId);
    } catch (failure) {
      return unchecked(request, failure);
    }
    return found instanceof Promise ? found.then(withKey, unchecked.bind(null, request)) : withKey(found);
  };
  let checked: ReturnType<CheckToken>;
  try {
    checked = bearers.check(token);
  } catch (failure) {
    return unchecked(request, failure);
  }
  return checked instanceof Promise ? checked.then(withClaims, unchecked.bind(null, request)) : withClaims(checked);
}

/**
 * The identity of a request whose key was looked up; a test key's with its clock, read now; with a token, what it
 * may do, and whether it expired in the key's time (or in real time: every token dies a lifetime after it was issued).
 */
export function identifyAs(
  request: FastifyRequest,
  identity: Identity,
  clockOf: ClockOf,
  claims?: TokenClaims,
  real = 0,
): Promise<void> | undefined {
  if (identity.kind !== 'key') return void (request.identity = identity);
  if (!identity.key.test)
    return void (request.identity = claims ? withToken(identity, claims, undefined, real) : identity);
  const done = (clock: KeyClock): undefined => {
    request.identity = claims ? withToken(identity, claims, clock, real) : { ...identity, clock };
    return undefined;
  };
  let clock: ReturnType<ClockOf>;
  try {
    clock = clockOf(identity.key.id);
  } catch (failure) {
    return unchecked(request, failure);
  }
  if (!(clock instanceof Promise)) return done(clock);
  return clock.then(done, unchecked.bind(null, request));
}

/**
 * A live key's identity with a token that has not expired, made at the token's first request with the key's record
 * (an unchanged record has one identity: `keyIdentity`), so that its requests share it as a key's requests do.
 */
const tokenIdentities = new WeakMap<TokenClaims, { of: KeyIdentity; identity: KeyIdentity }>();

/** A key's identity with its token: what the token may do, and whether it expired (in the key's time, or real time). */
function withToken(identity: KeyIdentity, claims: TokenClaims, clock: KeyClock | undefined, real: number): KeyIdentity {
  const now = clock === undefined ? real : keyNow(clock, real);
  const expired =
    now >= claims.expiresAt
      ? `The access token expired at ${new Date(claims.expiresAt).toISOString()}, in its key's time.`
      : real >= claims.diesAt
        ? `The access token expired at ${new Date(claims.diesAt).toISOString()}.`
        : undefined;
  const token = { digest: claims.digest, scopes: claims.scopes, expired };
  if (clock !== undefined || expired !== undefined) return { ...identity, clock, token };
  const held = tokenIdentities.get(claims);
  if (held?.of === identity) return held.identity;
  const made = { ...identity, token };
  tokenIdentities.set(claims, { of: identity, identity: made });
  return made;
}

function identityOf(request: FastifyRequest, key: KeyRecord | undefined): Identity {
  if (!key) return anonymous(request, 'The API key is not known.', true);
  return keyIdentity(key) ?? anonymous(request, 'The API key was revoked.', true);
}

type KeyIdentity = Extract<Identity, { kind: 'key' }>;

/**
 * Each record's identity, built at its first request: a record is never changed (a change to the key
 * is a new record from the store, ./key-cache.ts), so neither is its identity, and the requests of one
 * key share one caller name and policy instead of building them again.
 */
const identities = new WeakMap<KeyRecord, KeyIdentity>();

/** The identity of a key's requests; none for a revoked key. */
export function keyIdentity(key: KeyRecord): KeyIdentity | undefined {
  if (key.revokedAt) return undefined;
  let identity = identities.get(key);
  if (identity === undefined) {
    // An unban made anywhere (admin API, CLI, another instance) travels on the key's row.
    identity = {
      kind: 'key',
      caller: keyCaller(key.id),
      policy: policyOfKey(key),
      unbanSeq: key.unbanSeq,
      countedEverywhere: false,
      key,
    };
    identities.set(key, identity);
  }
  return identity;
}

export function anonymous(request: FastifyRequest, reason: string, badKey: boolean, failure?: unknown): Identity {
  return {
    kind: 'anonymous',
    caller: addressCaller(request.ip),
    policy: ANONYMOUS_POLICY,
    unbanSeq: 0,
    countedEverywhere: badKey,
    reason,
    failure,
  };
}

/** RFC 6750 §3's refusal of a token that is expired, forged, malformed, foreign or of a revoked key. */
export function invalidToken(description: string): ProblemError {
  return new ProblemError(
    'invalid-token',
    description,
    {},
    {
      [WWW_AUTHENTICATE_HEADER]: `Bearer realm="petstore", error="invalid_token", error_description="${description.replaceAll('"', "'")}"`,
    },
  );
}

/**
 * The refusal of a request without a valid key, made only when an API operation refuses it: a request that is
 * merely counted (a docs page, what counts nothing) makes no error object.
 */
function refusalOf(reason: string): ProblemError {
  if (reason === NO_KEY) return noCredentials();
  if (reason === BOTH) return bothWays();
  return new ProblemError('unauthorized', reason);
}

function noCredentials(): ProblemError {
  return new ProblemError('unauthorized', NO_KEY, {}, { [WWW_AUTHENTICATE_HEADER]: 'Bearer realm="petstore"' });
}

function bothWays(): ProblemError {
  return new ProblemError('invalid-request', BOTH, {
    errors: [{ in: 'header', name: AUTHORIZATION_HEADER, message: BOTH }],
  });
}

/**
 * Runs after the limit stage on every API operation: the limiter has counted the request by then. With a token,
 * the scope the operation needs (`scope`, the route's): a token without it is refused (RFC 6750 §3.1).
 */
function requireKey(scope: string | undefined) {
  return function requireKey(request: FastifyRequest): void {
    const identity = request.identity;
    if (identity.kind !== 'key') throw (identity.failure as Error | undefined) ?? refusalOf(identity.reason);
    const token = identity.token;
    if (token === undefined) return;
    if (token.expired !== undefined) throw invalidToken(token.expired);
    if (scope !== undefined && !token.scopes.has(scope))
      throw new ProblemError(
        'insufficient-scope',
        `This operation needs the scope ${scope}; the access token holds ${[...token.scopes].join(' ')}.`,
        { scope },
        { [WWW_AUTHENTICATE_HEADER]: `Bearer realm="petstore", error="insufficient_scope", scope="${scope}"` },
      );
  };
}

/** Whose records a request writes: its key, and a test key's clock, which their times follow (test-mode/). */
export interface Owner {
  id: string;
  clock?: KeyClock;
}

/** The owner of what a request that passed `requireKey` writes. */
export function ownerOf(request: FastifyRequest): Owner {
  return { id: keyOf(request).id, clock: request.identity.clock };
}

/** The key of a request that passed `requireKey`. */
export function keyOf(request: FastifyRequest): KeyRecord {
  if (request.identity.kind !== 'key') throw new Error('keyOf called on a request without a valid key');
  return request.identity.key;
}
