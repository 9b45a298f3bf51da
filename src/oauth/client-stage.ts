import type { FastifyReply, FastifyRequest } from 'fastify';
import { ProblemError } from '../http/problems.js';
import type { Stage } from '../http/stages.js';
import { anonymous, type ClockOf, type FindKey, identifyAs, keyIdentity } from '../keys/identify.js';
import { isWellFormedKey } from '../keys/key-format.js';
import type { KeyRecord } from '../keys/repository.js';
import { OAuthError } from './errors.js';

/** A token request's form (RFC 6749 §4.4.2): a field sent more than once is kept as the list of its values. */
export type TokenForm = Record<string, string | string[]>;

export const FORM_CONTENT_TYPE = 'application/x-www-form-urlencoded';
const BASIC = /^Basic +([A-Za-z0-9+/]+={0,2}) *$/i;

/**
 * The client stage: who asks the token endpoint for a token (docs/tokens.md), from its client credentials (RFC 6749
 * §2.3.1): the key's id and the key itself, by HTTP Basic or in the form, never both. The pipeline runs it once the
 * form is read (the route's `clientCredentials`, ../http/stages.ts); the request is then the key's, counted and
 * limited as any other. Credentials that are not a key's count against the address like an unknown key.
 */
export function clientStage(findKey: FindKey, clockOf: ClockOf): Stage {
  function identify(request: FastifyRequest): Promise<void> | undefined {
    const refuse = (error: OAuthError, badKey = false) =>
      void (request.identity = anonymous(request, error.description, badKey, error));
    const credentials = credentialsOf(request);
    if (credentials instanceof OAuthError) return refuse(credentials, credentials.error === 'invalid_client');
    const { id, secret, basic } = credentials;
    const wrong = () => new OAuthError('invalid_client', 'The client credentials are not those of a key.', basic);
    if (!isWellFormedKey(secret)) return refuse(wrong(), true);
    const settle = (key: KeyRecord | undefined) => {
      const identity = key && keyIdentity(key);
      if (identity === undefined || identity.key.id !== id) return refuse(wrong(), true);
      return identifyAs(request, identity, clockOf);
    };
    let found: ReturnType<FindKey>;
    try {
      found = findKey(secret);
    } catch (failure) {
      return void (request.identity = anonymous(request, 'The client could not be checked.', false, failure));
    }
    if (!(found instanceof Promise)) return settle(found);
    return found.then(settle, (failure) => {
      request.identity = anonymous(request, 'The client could not be checked.', false, failure);
    });
  }

  /** After the limit stage: a client that is not a key's is refused in OAuth's words; the store's failure as usual. */
  function requireClient(request: FastifyRequest, reply: FastifyReply): FastifyReply | undefined {
    const identity = request.identity;
    if (identity.kind === 'key') return undefined;
    if (identity.failure instanceof OAuthError) return identity.failure.send(reply);
    throw (identity.failure as Error | undefined) ?? new ProblemError('unauthorized', identity.reason);
  }

  return {
    name: 'oauth-client',
    forRoute: (route) => (route.clientCredentials ? { onRequest: identify, beforeBody: requireClient } : {}),
  };
}

/** The client's id and secret, and whether they came by HTTP Basic; or why the request cannot say. */
function credentialsOf(request: FastifyRequest): { id: string; secret: string; basic: boolean } | OAuthError {
  const type = request.headers['content-type'];
  if (typeof type !== 'string' || type.split(';')[0]!.trim().toLowerCase() !== FORM_CONTENT_TYPE)
    return new OAuthError('invalid_request', `A token request is a form: Content-Type ${FORM_CONTENT_TYPE}.`);
  const form = (request.body ?? {}) as TokenForm;
  for (const [name, value] of Object.entries(form))
    if (Array.isArray(value)) return new OAuthError('invalid_request', `The form sends ${name} more than once.`);
  const { client_id: id, client_secret: secret } = form as Record<string, string | undefined>;
  const authorization = request.headers.authorization;
  if (authorization !== undefined) {
    const basic = BASIC.exec(authorization)?.[1];
    if (basic === undefined)
      return new OAuthError('invalid_client', 'The Authorization header holds no HTTP Basic credentials.', true);
    if (secret !== undefined)
      return new OAuthError(
        'invalid_request',
        'The client authenticates by HTTP Basic or by client_secret in the form, not both.',
      );
    const decoded = Buffer.from(basic, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon === -1) return new OAuthError('invalid_client', 'The HTTP Basic credentials hold no colon.', true);
    const [basicId, basicSecret] = [decoded.slice(0, colon), decoded.slice(colon + 1)].map(formDecoded) as [
      string,
      string,
    ];
    if (id !== undefined && id !== basicId)
      return new OAuthError('invalid_request', 'The form names another client_id than HTTP Basic.');
    return { id: basicId, secret: basicSecret, basic: true };
  }
  if (id === undefined || secret === undefined)
    return new OAuthError(
      'invalid_client',
      'Send client credentials: HTTP Basic (the key id and the key), or client_id and client_secret in the form.',
    );
  return { id, secret, basic: false };
}

/** RFC 6749 §2.3.1: the id and secret are form-encoded before Basic encodes them. */
function formDecoded(text: string): string {
  try {
    return decodeURIComponent(text.replaceAll('+', ' '));
  } catch {
    return text;
  }
}
