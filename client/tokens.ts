/**
 * One access token for every caller of a client with OAuth 2.0 client credentials (the service's docs/tokens.md):
 * asked for once, behind one shared promise, and renewed once, for everyone, shortly before it expires or after the
 * service refused it. Its life is measured with the client's clock (`now`), the key's time when a test moves it.
 */
import type { operations } from './generated/schema.js';

/** A key as an OAuth client: its id (`key_…`) and the key itself (`pet_…`). */
export interface ClientCredentials {
  clientId: string;
  clientSecret: string;
  /** Space-separated, from `pets:read orders:read orders:write webhooks:write`. Default: all of them. */
  scope?: string;
}

/** The answer of `POST /oauth/token`. */
export type AccessToken = operations['getAccessToken']['responses'][200]['content']['application/json'];

/**
 * How long before it expires a token is renewed: 30 s, or half its life when that is shorter. Far enough ahead for
 * the request in flight and a clock a little behind; near enough that no token is given up with more than a minute
 * left (a test key's card fails `reuses-tokens` then).
 */
export const RENEW_BEFORE_MS = 30_000;

/** A token and when (client clock, ms) it is to be renewed. */
interface Held {
  value: string;
  renewAt: number;
}

export class AccessTokens {
  /** The token every caller sends, or the one request for it under way. */
  #shared: Promise<Held> | undefined;
  /** `#shared`'s token, once answered. */
  #current: Held | undefined;
  /** The newest token got, for what must not wait for one (see `latest`). */
  #latest: Held | undefined;

  /**
   * @param request asks the service for a token (`POST /oauth/token`, through the client's gate and retries).
   * @param now the client's clock.
   */
  constructor(
    private readonly request: () => Promise<AccessToken>,
    private readonly now: () => number,
  ) {}

  /**
   * The token to send. Concurrent callers share one request for it; the first to find it due for renewal renews
   * it, for all of them. A token just got is sent whatever its life: one renewal per call at most.
   */
  async get(): Promise<string> {
    const asked = this.#shared ?? this.#renew();
    const held = await asked;
    // Refused or renewed while this caller waited: the token that replaces it (asked for now, if nobody has yet).
    if (this.#shared !== asked) return (await (this.#shared ?? this.#renew())).value;
    if (this.now() < held.renewAt) return held.value;
    return (await this.#renew()).value;
  }

  /**
   * The service refused `token` (`401` `invalid_token`): the next `get` renews it, once for every caller it was
   * refused to. A token that replaced it already (or is being asked for) is kept: the refused one is never sent again.
   */
  refused(token: string): void {
    if (this.#current?.value !== token) return;
    this.#shared = undefined;
    this.#current = undefined;
  }

  /** The newest token got, without waiting for one: for the client's look at its limits, which holds its gate. */
  get latest(): string | undefined {
    return this.#latest?.value;
  }

  /** Asks for a token, which every caller shares from now on. */
  #renew(): Promise<Held> {
    const asked = this.request().then(({ access_token: value, expires_in: expiresIn }) => {
      const lifeMs = 1000 * expiresIn;
      const held = { value, renewAt: this.now() + lifeMs - Math.min(RENEW_BEFORE_MS, lifeMs / 2) };
      this.#latest = held;
      if (this.#shared === asked) this.#current = held;
      return held;
    });
    // A request that failed is not kept: the next caller asks again.
    asked.catch(() => {
      if (this.#shared === asked) this.#shared = undefined;
    });
    this.#shared = asked;
    this.#current = undefined;
    return asked;
  }
}
