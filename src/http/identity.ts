import type { FastifyReply, FastifyRequest } from 'fastify';
import { isWellFormedKey } from '../keys/key-format.js';
import { policyOfKey, type KeyRecord } from '../keys/repository.js';
import { ANONYMOUS_POLICY, type Policy } from '../ratelimit/plans.js';
import { ProblemError } from './problems.js';

export const API_KEY_HEADER = 'X-API-Key';

/**
 * Who is calling. A valid key is its own caller; anything else (no key, a malformed, unknown or
 * revoked one) is counted per client address under the anonymous policy, which throttles guessing.
 */
export type Identity =
  | { kind: 'key'; caller: string; policy: Policy; key: KeyRecord }
  | {
      kind: 'anonymous';
      caller: string;
      policy: Policy;
      reason: string;
      /** A key was sent and is malformed, unknown or revoked: counted against the address on every path. */
      badKey: boolean;
      failure?: unknown;
    };

declare module 'fastify' {
  interface FastifyRequest {
    identity: Identity;
  }
}

/** Finds a well-formed key's record, from memory when it can (keys/key-cache.ts). */
export type FindKey = (key: string) => KeyRecord | undefined | Promise<KeyRecord | undefined>;

const NO_KEY = 'Send your API key in the X-API-Key header.';
const MALFORMED = 'The X-API-Key header does not hold a key of the form pet_….';

/** The first step of every request: who is calling. Synchronous when the key is known in memory. */
export function identifyHook(findKey: FindKey) {
  return function identify(request: FastifyRequest): Promise<void> | undefined {
    const sent = request.headers['x-api-key'];
    if (sent === undefined || sent === '') return void (request.identity = anonymous(request, NO_KEY, false));
    if (typeof sent !== 'string' || !isWellFormedKey(sent)) return void (request.identity = anonymous(request, MALFORMED, true));
    // The store is down (or failing): the request is still limited, per address, and carries the
    // headers; `requireKey` then answers with the failure (a 503 when the store cannot be reached).
    const unchecked = (failure: unknown) => void (request.identity = anonymous(request, 'The API key could not be checked.', false, failure));
    let found: ReturnType<FindKey>;
    try {
      found = findKey(sent);
    } catch (failure) {
      return unchecked(failure);
    }
    if (!(found instanceof Promise)) return void (request.identity = identityOf(request, found));
    return found.then((key) => void (request.identity = identityOf(request, key)), unchecked);
  };
}

function identityOf(request: FastifyRequest, key: KeyRecord | undefined): Identity {
  if (!key) return anonymous(request, 'The API key is not known.', true);
  return keyIdentity(key) ?? anonymous(request, 'The API key was revoked.', true);
}

/** The identity of a key's requests; none for a revoked key. */
export function keyIdentity(key: KeyRecord): Extract<Identity, { kind: 'key' }> | undefined {
  if (key.revokedAt) return undefined;
  return { kind: 'key', caller: `key:${key.id}`, policy: policyOfKey(key), key };
}

function anonymous(request: FastifyRequest, reason: string, badKey: boolean, failure?: unknown): Identity {
  return { kind: 'anonymous', caller: `ip:${request.ip}`, policy: ANONYMOUS_POLICY, reason, badKey, failure };
}

/** Runs after the limit step on every API operation: the limiter has counted the request by then. */
export function requireKey(request: FastifyRequest, _reply: FastifyReply, done: (error?: Error) => void): void {
  const identity = request.identity;
  if (identity.kind === 'key') return done();
  done((identity.failure as Error | undefined) ?? new ProblemError('unauthorized', identity.reason));
}

/** The key of a request that passed `requireKey`. */
export function keyOf(request: FastifyRequest): KeyRecord {
  if (request.identity.kind !== 'key') throw new Error('keyOf called on a request without a valid key');
  return request.identity.key;
}
