import { type CryptoKey, exportJWK, generateKeyPair, importJWK, type JWK } from 'jose';
import type { Clock } from '../clock.js';
import type { Db } from '../db/database.js';

/** How access tokens are signed (docs/design.md#access-tokens): chosen by measurement. */
export const ALGORITHM = 'ES256';

/** How often another look at the store may be asked for by a token naming a key this instance does not know. */
const UNKNOWN_KID_LOOK_MS = 1_000;

export interface SigningKeySettings {
  /** How long a token lives (OAUTH_TOKEN_TTL_SECONDS): a key is served this long after it stopped signing. */
  tokenTtlMs: number;
  /** How long a key signs before the next takes over (OAUTH_KEY_ROTATION_DAYS). */
  rotationMs: number;
}

/** An EC public key's members (RFC 7518 §6.2.1). */
type PublicJwk = JWK & { kty: string; crv: string; x: string; y: string };

interface Row {
  kid: string;
  notBefore: number;
  notAfter: number;
  publicJwk: JWK;
}

/**
 * The keys that sign access tokens, in the store so that every instance signs and verifies with the same ones. The
 * periods are the rotation's, counted from the epoch: the first instance that needs a period's key makes it (the
 * others, at the same moment, read the one that won), and the key of a period signs only within it. A key is served
 * in the JWKS, and verifies, as long as a token it signed may be alive: until its period's end plus a token's
 * lifetime (every token dies that long after it was issued, in real time, whatever a test clock says). A private key
 * is read from its row into this process's memory and goes nowhere else.
 */
export class SigningKeys {
  readonly #rows = new Map<string, Row>();
  readonly #public = new Map<string, Promise<CryptoKey>>();
  readonly #private = new Map<string, Promise<CryptoKey>>();
  #lookedAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly settings: SigningKeySettings,
  ) {}

  /** The key that signs now: its id and private half. */
  async signer(): Promise<{ kid: string; key: CryptoKey }> {
    const now = this.clock();
    let row = this.#covering(now) ?? (await this.#look(), this.#covering(now));
    if (row === undefined) {
      await this.#make(now);
      await this.#look();
      row = this.#covering(now);
      if (row === undefined) throw new Error('no signing key covers now, even after one was made');
    }
    let key = this.#private.get(row.kid);
    if (key === undefined) this.#private.set(row.kid, (key = this.#privateOf(row.kid)));
    return { kid: row.kid, key: await key };
  }

  /**
   * The public half of a key that may have signed a token alive now, or undefined. A key this instance does not
   * know is looked for in the store, at most once a second: a token naming made-up keys costs no more.
   */
  async verifier(kid: string): Promise<CryptoKey | undefined> {
    const now = this.clock();
    if (!this.#rows.has(kid) && now - this.#lookedAt >= UNKNOWN_KID_LOOK_MS) await this.#look();
    const row = this.#rows.get(kid);
    if (row === undefined || !this.#alive(row, now)) return undefined;
    let key = this.#public.get(kid);
    if (key === undefined) this.#public.set(kid, (key = importJWK(row.publicJwk, ALGORITHM) as Promise<CryptoKey>));
    return key;
  }

  /** The public keys that may have signed a token alive now, newest first (RFC 7517): read from the store. */
  async jwks(): Promise<{ keys: (PublicJwk & { kid: string; alg: string; use: string })[] }> {
    await this.#look();
    const now = this.clock();
    const alive = [...this.#rows.values()].filter((row) => row.notBefore <= now && this.#alive(row, now));
    alive.sort((a, b) => b.notBefore - a.notBefore);
    return {
      keys: alive.map((row) => ({ ...(row.publicJwk as PublicJwk), kid: row.kid, alg: ALGORITHM, use: 'sig' })),
    };
  }

  #alive(row: Row, now: number): boolean {
    return now < row.notAfter + this.settings.tokenTtlMs;
  }

  #covering(now: number): Row | undefined {
    let found: Row | undefined;
    for (const row of this.#rows.values())
      if (row.notBefore <= now && now < row.notAfter && (!found || row.notBefore > found.notBefore)) found = row;
    return found;
  }

  /** Reads every key still alive; forgets those that are not. */
  async #look(): Promise<void> {
    this.#lookedAt = this.clock();
    const rows = await this.db
      .selectFrom('oauth_signing_keys')
      .select(['kid', 'not_before', 'not_after', 'public_jwk'])
      .where('not_after', '>', this.#lookedAt - this.settings.tokenTtlMs)
      .execute();
    this.#rows.clear();
    for (const row of rows)
      this.#rows.set(row.kid, {
        kid: row.kid,
        notBefore: Number(row.not_before),
        notAfter: Number(row.not_after),
        publicJwk: JSON.parse(row.public_jwk) as JWK,
      });
    for (const kid of this.#public.keys()) if (!this.#rows.has(kid)) this.#public.delete(kid);
    for (const kid of this.#private.keys()) if (!this.#rows.has(kid)) this.#private.delete(kid);
  }

  /** Makes the key of `now`'s period, unless another instance did first; removes the keys no token can need. */
  async #make(now: number): Promise<void> {
    const { rotationMs, tokenTtlMs } = this.settings;
    const notBefore = now - (now % rotationMs);
    const { publicKey, privateKey } = await generateKeyPair(ALGORITHM, { extractable: true });
    await this.db
      .insertInto('oauth_signing_keys')
      .values({
        kid: `${new Date(notBefore).toISOString().slice(0, 10)}-${rotationMs / 86_400_000}d`,
        not_before: notBefore,
        not_after: notBefore + rotationMs,
        public_jwk: JSON.stringify(await exportJWK(publicKey)),
        private_jwk: JSON.stringify(await exportJWK(privateKey)),
      })
      .onConflict((conflict) => conflict.column('kid').doNothing())
      .execute();
    await this.db
      .deleteFrom('oauth_signing_keys')
      .where('not_after', '<=', now - tokenTtlMs)
      .execute();
  }

  async #privateOf(kid: string): Promise<CryptoKey> {
    const row = await this.db
      .selectFrom('oauth_signing_keys')
      .select('private_jwk')
      .where('kid', '=', kid)
      .executeTakeFirstOrThrow();
    return importJWK(JSON.parse(row.private_jwk) as JWK, ALGORITHM) as Promise<CryptoKey>;
  }
}
