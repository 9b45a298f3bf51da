import type { FastifyRequest } from 'fastify';
import Type from 'typebox';
import { REAL_TIME } from '../clock.js';
import { CACHE_CONTROL_HEADER, NO_STORE, NO_STORE_HEADER, problemResponses } from '../http/responses.js';
import { TAG } from '../http/tags.js';
import type { App } from '../http/types.js';
import { keyOf } from '../keys/identify.js';
import { FORM_CONTENT_TYPE, type TokenForm } from './client-stage.js';
import { OAuthError, OAuthErrorBody } from './errors.js';
import { SCOPE_NAMES, scopesAsked } from './scopes.js';
import type { Tokens } from './tokens.js';

export const TOKEN_PATH = '/oauth/token';
export const GRANT_TYPE = 'client_credentials';

const TokenRequest = Type.Object({
  grant_type: Type.String({ description: '`client_credentials`.', examples: [GRANT_TYPE], maxLength: 100 }),
  scope: Type.Optional(
    Type.String({
      description: `Space-separated, from \`${SCOPE_NAMES.join(' ')}\`; absent: all of them.`,
      maxLength: 200,
    }),
  ),
  client_id: Type.Optional(
    Type.String({ description: 'Your key id (`key_…`), unless sent by HTTP Basic.', maxLength: 100 }),
  ),
  client_secret: Type.Optional(
    Type.String({ description: 'Your key (`pet_…`), unless sent by HTTP Basic.', maxLength: 100 }),
  ),
});

const TokenAnswer = Type.Object({
  access_token: Type.String({
    description: 'A JWT (RFC 9068): send it as `Authorization: Bearer <token>`.',
    maxLength: 2048,
  }),
  token_type: Type.Literal('Bearer'),
  expires_in: Type.Integer({
    description: "Seconds until it expires, in your key's time.",
    format: 'int32',
    minimum: 0,
    maximum: 2_147_483_647,
  }),
  scope: Type.String({ description: 'The scopes it holds, space-separated.', maxLength: 200 }),
});

const oauthError = (description: string) => ({
  description,
  headers: NO_STORE_HEADER,
  content: { 'application/json': { schema: OAuthErrorBody } },
});

/**
 * Reads a token request's form; a field sent more than once keeps every value (./client-stage.ts refuses it). The text
 * as sent is kept for the request log.
 */
function parseForm(request: FastifyRequest, body: string, done: (error: null, form: TokenForm) => void): void {
  request.bodyText = body;
  const form: TokenForm = {};
  for (const [name, value] of new URLSearchParams(body)) {
    const held = form[name];
    form[name] = held === undefined ? value : Array.isArray(held) ? [...held, value] : [held, value];
  }
  done(null, form);
}

/**
 * `POST /oauth/token` (getAccessToken): OAuth 2.0's client credentials grant (RFC 6749 §4.4), the key as the client.
 * An API request of the key (counted, limited, banned, faulted), whose caller is known once its form is read
 * (./client-stage.ts); its own refusals are in OAuth's shape (./errors.ts), the service's others are problems.
 */
export function tokenRoute(app: App, { tokens, ttlSeconds }: { tokens: Tokens; ttlSeconds: number }): void {
  // A form parser for this route only: a form is no other operation's body.
  void app.register(async (scope: App) => {
    scope.addContentTypeParser(FORM_CONTENT_TYPE, { parseAs: 'string' }, parseForm);
    scope.post(
      TOKEN_PATH,
      {
        // Tokens are the same in every version: a client pinned to a sunset one still gets one.
        config: { clientCredentials: true, everyVersion: true },
        attachValidation: true,
        schema: {
          operationId: 'getAccessToken',
          summary: 'Get an access token',
          description:
            "OAuth 2.0's client credentials grant (RFC 6749 §4.4): your key id is the `client_id`, your key the " +
            '`client_secret`, sent by HTTP Basic (`client_secret_basic`) or in the form (`client_secret_post`), ' +
            `never both. The token is a JWT (RFC 9068) that lives ${ttlSeconds} s in your key's time (a test ` +
            "clock's advance expires it), and may do what its `scope` says. Ask for a new one shortly before it " +
            'expires, once for all your callers. Counts like any request; its refusals are OAuth ' +
            'errors (RFC 6749 §5.2), except the service-wide ones (`429`, `503`), which are problems.',
          tags: [TAG.tokens],
          'x-stability': 'beta',
          body: { content: { [FORM_CONTENT_TYPE]: { schema: TokenRequest } } },
          response: {
            200: {
              description: 'An access token.',
              headers: NO_STORE_HEADER,
              content: { 'application/json': { schema: TokenAnswer } },
            },
            400: oauthError('`invalid_request`, `unsupported_grant_type` or `invalid_scope`.'),
            401: oauthError('`invalid_client`: the credentials are not those of a key (or were revoked).'),
            ...problemResponses(429, 500, 503),
          },
        },
      },
      async (request, reply) => {
        const form = request.body as Record<string, string | undefined>;
        const grant = form.grant_type;
        if (grant === undefined) return new OAuthError('invalid_request', 'The form names no grant_type.').send(reply);
        if (grant !== GRANT_TYPE)
          return new OAuthError('unsupported_grant_type', `This API grants ${GRANT_TYPE} only.`).send(reply);
        const asked = scopesAsked(form.scope);
        if ('unknown' in asked)
          return new OAuthError(
            'invalid_scope',
            `${asked.unknown === '' ? 'The scope is empty' : `The scope ${asked.unknown} is unknown`}; ask for ` +
              `some of: ${SCOPE_NAMES.join(' ')}.`,
          ).send(reply);
        const issued = await tokens.issue(keyOf(request).id, request.identity.clock ?? REAL_TIME, asked.scopes);
        reply.header(CACHE_CONTROL_HEADER, NO_STORE).header('Pragma', 'no-cache');
        return {
          access_token: issued.accessToken,
          token_type: 'Bearer' as const,
          expires_in: issued.expiresIn,
          scope: issued.scope,
        };
      },
    );
  });
}
