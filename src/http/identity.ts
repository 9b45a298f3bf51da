import type { FastifyReply, FastifyRequest } from 'fastify';
import { isWellFormedKey } from '../keys/key-format.js';
import { policyOfKey, type KeyRecord, type KeysRepository } from '../keys/repository.js';
import { ANONYMOUS_POLICY, type Policy } from '../ratelimit/plans.js';
import { ProblemError } from './problems.js';

export const API_KEY_HEADER = 'X-API-Key';

/**
 * Who is calling. A valid key is its own caller; anything else (no key, a malformed, unknown or
 * revoked one) is counted per client address under the anonymous policy, which throttles guessing.
 */
export type Identity =
  | { kind: 'key'; caller: string; policy: Policy; key: KeyRecord }
  | { kind: 'anonymous'; caller: string; policy: Policy; reason: string; failure?: unknown };

declare module 'fastify' {
  interface FastifyRequest {
    identity: Identity;
  }
}

/** The first step of every request: look the key up (no cache, so revocations apply at once). */
export function identifyHook(keys: KeysRepository) {
  return async function identify(request: FastifyRequest): Promise<void> {
    request.identity = await identityOf(request, keys);
  };
}

async function identityOf(request: FastifyRequest, keys: KeysRepository): Promise<Identity> {
  const sent = request.headers['x-api-key'];
  const anonymous = (reason: string, failure?: unknown): Identity => ({ kind: 'anonymous', caller: `ip:${request.ip}`, policy: ANONYMOUS_POLICY, reason, failure });
  if (sent === undefined || sent === '') return anonymous(`Send your API key in the X-API-Key header.`);
  if (typeof sent !== 'string' || !isWellFormedKey(sent)) return anonymous('The X-API-Key header does not hold a key of the form pet_….');
  let key: KeyRecord | undefined;
  try {
    key = await keys.findByKey(sent);
  } catch (failure) {
    // The store is down (or failing): the request is still limited, per address, and carries the
    // headers; `requireKey` then answers with the failure (a 503 when the store cannot be reached).
    return anonymous('The API key could not be checked.', failure);
  }
  if (!key) return anonymous('The API key is not known.');
  if (key.revokedAt) return anonymous('The API key was revoked.');
  return { kind: 'key', caller: `key:${key.id}`, policy: policyOfKey(key), key };
}

/** Runs after the limit step on every API operation: the limiter has counted the request by then. */
export async function requireKey(request: FastifyRequest, _reply: FastifyReply): Promise<void> {
  const identity = request.identity;
  if (identity.kind === 'key') return;
  throw identity.failure ?? new ProblemError('unauthorized', identity.reason);
}

/** The key of a request that passed `requireKey`. */
export function keyOf(request: FastifyRequest): KeyRecord {
  if (request.identity.kind !== 'key') throw new Error('keyOf called on a request without a valid key');
  return request.identity.key;
}
