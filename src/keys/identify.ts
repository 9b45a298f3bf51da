import type { FastifyRequest } from 'fastify';
import { ProblemError } from '../http/problems.js';
import type { Caller } from '../ratelimit/stage.js';
import type { Phases, Stage } from '../http/stages.js';
import { addressCaller, keyCaller } from '../ratelimit/callers.js';
import { ANONYMOUS_POLICY } from '../ratelimit/plans.js';
import { isWellFormedKey } from './key-format.js';
import { type KeyRecord, policyOfKey } from './repository.js';
import type { KeyClock } from '../clock.js';

/** The header a key travels in, as documented; Node hands header names over in lower case. */
export const API_KEY_HEADER = 'X-API-Key';
const API_KEY_FIELD = API_KEY_HEADER.toLowerCase();

/**
 * Who is calling. A valid key is its own caller; anything else (no key, a malformed, unknown or
 * revoked one) is counted per client address under the anonymous policy, which throttles guessing.
 * A key sent that is malformed, unknown or revoked is counted against the address on every path.
 */
export type Identity = Caller &
  ({ kind: 'key'; key: KeyRecord } | { kind: 'anonymous'; reason: string; failure?: unknown });

declare module 'fastify' {
  interface FastifyRequest {
    identity: Identity;
  }
}

/** Finds a well-formed key's record, from memory when it can (keys/key-cache.ts). */
export type FindKey = (key: string) => KeyRecord | undefined | Promise<KeyRecord | undefined>;

const NO_KEY = `Send your API key in the ${API_KEY_HEADER} header.`;
const MALFORMED = `The ${API_KEY_HEADER} header does not hold a key of the form pet_….`;

/** A test key's clock, read from the store at each of its requests (test-mode/clocks.ts). */
export type ClockOf = (keyId: string) => KeyClock | Promise<KeyClock>;

/**
 * The identify stage: who is calling, first of all (the limit stage counts the request to it); and, for an
 * API operation, once the request is counted, that the caller has a valid key (`requireKey`, before the body
 * is read).
 */
export function identifyStage(findKey: FindKey, clockOf: ClockOf): Stage {
  const identify = identifyHook(findKey, clockOf);
  const everywhere: Phases = { onRequest: identify };
  const api: Phases = { onRequest: identify, beforeBody: requireKey };
  return { name: 'identify', fields: { identity: undefined }, forRoute: (route) => (route.api ? api : everywhere) };
}

/**
 * Who is calling. Synchronous when the key is known in memory; a test key's clock is read at each of its
 * requests, so that a move made through any instance holds at once.
 */
function identifyHook(findKey: FindKey, clockOf: ClockOf) {
  return function identify(request: FastifyRequest): Promise<void> | undefined {
    const sent = request.headers[API_KEY_FIELD];
    if (sent === undefined || sent === '') return void (request.identity = anonymous(request, NO_KEY, false));
    if (typeof sent !== 'string' || !isWellFormedKey(sent))
      return void (request.identity = anonymous(request, MALFORMED, true));
    // The store is down (or failing): the request is still limited, per address, and carries the
    // headers; `requireKey` then answers with the failure (a 503 when the store cannot be reached).
    const unchecked = (failure: unknown) =>
      void (request.identity = anonymous(request, 'The API key could not be checked.', false, failure));
    let found: ReturnType<FindKey>;
    try {
      found = findKey(sent);
    } catch (failure) {
      return unchecked(failure);
    }
    if (!(found instanceof Promise)) return settle(request, found, clockOf);
    return found.then((key) => settle(request, key, clockOf), unchecked);
  };
}

/** The identity of a request whose key was looked up; a test key's with its clock, read now. */
function settle(request: FastifyRequest, key: KeyRecord | undefined, clockOf: ClockOf): Promise<void> | undefined {
  const identity = identityOf(request, key);
  if (identity.kind !== 'key' || !identity.key.test) return void (request.identity = identity);
  const unchecked = (failure: unknown) =>
    void (request.identity = anonymous(request, 'The API key could not be checked.', false, failure));
  let clock: ReturnType<ClockOf>;
  try {
    clock = clockOf(identity.key.id);
  } catch (failure) {
    return unchecked(failure);
  }
  if (!(clock instanceof Promise)) return void (request.identity = { ...identity, clock });
  return clock.then((read) => void (request.identity = { ...identity, clock: read }), unchecked);
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

function anonymous(request: FastifyRequest, reason: string, badKey: boolean, failure?: unknown): Identity {
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

/** Runs after the limit stage on every API operation: the limiter has counted the request by then. */
function requireKey(request: FastifyRequest): void {
  const identity = request.identity;
  if (identity.kind === 'key') return;
  throw (identity.failure as Error | undefined) ?? new ProblemError('unauthorized', identity.reason);
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
