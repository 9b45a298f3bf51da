/**
 * Whose a client's requests are, as each one says it (the service's docs/tokens.md): the key, in `X-API-Key`; or, with
 * client credentials, the access token all the client's callers share (./tokens.ts), in `Authorization: Bearer`, the
 * token request itself carrying the credentials by HTTP Basic.
 */
import { type AccessToken, AccessTokens, type ClientCredentials } from './tokens.js';
import type { Call } from './transport.js';

/** The key, or client credentials (requests then carry tokens). */
export type Credentials = { apiKey: string } | ClientCredentials;

/** RFC 6750 §3's challenge of a refused token (expired, most often). */
const INVALID_TOKEN = /\berror="?invalid_token\b/;

export class Authentication {
  readonly #credentials: Credentials;
  readonly #tokens: AccessTokens | undefined;

  /**
   * @param credentials the API key (`pet_…`), or client credentials.
   * @param send sends a call as the client sends any (its gate, its retries): the token request.
   * @param now the client's clock, with which a token's life is measured.
   */
  constructor(credentials: string | Credentials, send: (call: Call) => Promise<AccessToken>, now: () => number) {
    this.#credentials = typeof credentials === 'string' ? { apiKey: credentials } : credentials;
    if ('clientId' in this.#credentials) {
      const call = tokenCall(this.#credentials.scope);
      this.#tokens = new AccessTokens(() => send(call), now);
    }
  }

  /** The token `call` is to carry, if any: got before the call waits at the gate, as asking for one waits there too. */
  async tokenFor(call: Call): Promise<string | undefined> {
    return call.asClient ? undefined : this.#tokens?.get();
  }

  /**
   * A request's headers: the key; its token; or, asking for a token, the client credentials by HTTP Basic (each
   * form-encoded first, as RFC 6749 §2.3.1 says). Without a token, the client secret, which is the key.
   */
  headers(token: string | undefined, { asClient = false }: Pick<Call, 'asClient'> = {}): Record<string, string> {
    const credentials = this.#credentials;
    if ('apiKey' in credentials) return { 'x-api-key': credentials.apiKey };
    if (asClient) {
      const basic = `${formEncoded(credentials.clientId)}:${formEncoded(credentials.clientSecret)}`;
      return { authorization: `Basic ${btoa(basic)}` };
    }
    return token === undefined ? { 'x-api-key': credentials.clientSecret } : { authorization: `Bearer ${token}` };
  }

  /**
   * The headers of a request sent while the gate waits for it (its look at the limits): the newest token, never a
   * new one, whose request would queue behind that very wait.
   */
  headersNow(): Record<string, string> {
    return this.headers(this.#tokens?.latest);
  }

  /**
   * Whether `response` refused the `token` it carried (`401`, `WWW-Authenticate: Bearer error="invalid_token"`):
   * then the next `tokenFor` renews it, once for every caller it was refused to.
   */
  refused(response: Response, token: string | undefined): boolean {
    if (this.#tokens === undefined || token === undefined || response.status !== 401) return false;
    if (!INVALID_TOKEN.test(response.headers.get('www-authenticate') ?? '')) return false;
    this.#tokens.refused(token);
    return true;
  }
}

/** `POST /oauth/token`: the client credentials grant. Sent again after any failure: a second token harms nothing. */
function tokenCall(scope: string | undefined): Call {
  return {
    operation: 'getAccessToken',
    method: 'POST',
    path: '/oauth/token',
    form: { grant_type: 'client_credentials', ...(scope === undefined ? {} : { scope }) },
    asClient: true,
    safe: true,
  };
}

/** `application/x-www-form-urlencoded`'s encoding of one value. */
const formEncoded = (value: string) => new URLSearchParams({ value }).toString().slice('value='.length);
