import { hash, randomBytes } from 'node:crypto';
import { compactVerify, SignJWT } from 'jose';
import { type Clock, type KeyClock, keyNow } from '../clock.js';
import type { CheckToken, TokenClaims } from '../keys/identify.js';
import { ALGORITHM, type SigningKeys } from './signing-keys.js';
import type { Scope } from './scopes.js';

/** RFC 9068's media type of an access token, in its header's `typ`. */
export const ACCESS_TOKEN_TYPE = 'at+jwt';
/** Verified tokens remembered by an instance: the oldest leave first beyond this. */
const REMEMBERED = 10_000;
/** A token longer than this is none of ours (ours are about 500 characters). */
const MAX_TOKEN_LENGTH = 2_048;
const JWS = /^[\w-]+\.[\w-]+\.[\w-]*$/;
const KEY_ID = /^key_[0-9a-f]{16}$/;

export interface TokenSettings {
  /** The issuer (`iss`) and the audience (`aud`): the service's public URL. */
  issuer: string;
  /** A token's lifetime (OAUTH_TOKEN_TTL_SECONDS), in ms. */
  ttlMs: number;
}

export interface Issued {
  accessToken: string;
  /** Seconds, in the key's time. */
  expiresIn: number;
  scope: string;
}

/**
 * Access tokens (docs/tokens.md): JWTs as RFC 9068 profiles them, signed with the store's current key
 * (./signing-keys.ts). A token lives in its key's time: `exp` is the key's now plus the lifetime, so a test clock's
 * advance past it expires it at once; `iat` is the real instant it was issued, and it dies a lifetime after that
 * too, whatever a clock says. A token's signature is checked once per instance, then the token is remembered
 * (the oldest of `REMEMBERED` leave first; a dead one is refused by its claims, keys/identify.ts); whether its key
 * still stands is asked at each request (keys/identify.ts), so a revocation stops it
 * under the same promise as the key's.
 */
export class Tokens {
  readonly #remembered = new Map<string, TokenClaims>();

  constructor(
    private readonly keys: SigningKeys,
    private readonly clock: Clock,
    private readonly settings: TokenSettings,
  ) {}

  async issue(keyId: string, keyClock: KeyClock, scopes: readonly Scope[]): Promise<Issued> {
    const { issuer, ttlMs } = this.settings;
    const real = this.clock();
    const exp = Math.floor((keyNow(keyClock, real) + ttlMs) / 1000);
    const { kid, key } = await this.keys.signer();
    const scope = scopes.join(' ');
    const accessToken = await new SignJWT({ client_id: keyId, scope })
      .setProtectedHeader({ alg: ALGORITHM, typ: ACCESS_TOKEN_TYPE, kid })
      .setIssuer(issuer)
      .setAudience(issuer)
      .setSubject(keyId)
      .setIssuedAt(Math.floor(real / 1000))
      .setExpirationTime(exp)
      .setJti(randomBytes(16).toString('base64url'))
      .sign(key);
    return { accessToken, expiresIn: exp - Math.floor(keyNow(keyClock, real) / 1000), scope };
  }

  /** What a token says, once its signature is checked, or why it is none of this service's. */
  readonly check: CheckToken = (token) => this.#remembered.get(token) ?? this.#verify(token);

  /**
   * What costs nothing is checked first (the header, then the claims this service sets), the signature last: a
   * token that is not even shaped like the service's costs no signature check.
   */
  async #verify(token: string): Promise<TokenClaims | string> {
    if (token.length > MAX_TOKEN_LENGTH || !JWS.test(token)) return 'The access token is not a JWT.';
    const [headerPart, payloadPart] = token.split('.') as [string, string];
    const header = parsed(headerPart);
    if (header?.alg !== ALGORITHM) return `The access token is not signed with ${ALGORITHM}.`;
    if (header.typ !== ACCESS_TOKEN_TYPE) return `The access token's typ is not ${ACCESS_TOKEN_TYPE}.`;
    const claims = parsed(payloadPart);
    const { issuer, ttlMs } = this.settings;
    if (claims?.iss !== issuer) return 'The access token was not issued by this API.';
    if (claims.aud !== issuer) return 'The access token is for another audience.';
    const { sub, client_id: clientId, scope, iat, exp } = claims;
    if (typeof sub !== 'string' || !KEY_ID.test(sub) || clientId !== sub) return 'The access token names no key.';
    if (typeof scope !== 'string' || typeof iat !== 'number' || typeof exp !== 'number')
      return 'The access token lacks a claim this API sets.';
    const key = typeof header.kid === 'string' ? await this.keys.verifier(header.kid) : undefined;
    if (key === undefined) return 'The access token is signed by a key this API does not know.';
    try {
      await compactVerify(token, key, { algorithms: [ALGORITHM] });
    } catch {
      return 'The access token signature does not verify.';
    }
    const verified: TokenClaims = {
      keyId: sub,
      scopes: new Set(scope.split(' ')),
      expiresAt: exp * 1000,
      diesAt: iat * 1000 + ttlMs,
      digest: hash('sha1', token, 'base64url').slice(0, 16),
    };
    if (this.#remembered.size >= REMEMBERED) this.#remembered.delete(this.#remembered.keys().next().value!);
    this.#remembered.set(token, verified);
    return verified;
  }
}

/** A JWT part's JSON object, or undefined. */
function parsed(part: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}
