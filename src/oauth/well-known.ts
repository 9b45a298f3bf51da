import Type from 'typebox';
import { problemResponses } from '../http/responses.js';
import { NoQuery } from '../http/schemas.js';
import { COUNTS_NOTHING } from '../http/stages.js';
import { TAG } from '../http/tags.js';
import type { App } from '../http/types.js';
import { ALGORITHM, type SigningKeys } from './signing-keys.js';
import { SCOPE_NAMES } from './scopes.js';
import { GRANT_TYPE, TOKEN_PATH } from './token-route.js';

export const METADATA_PATH = '/.well-known/oauth-authorization-server';
export const JWKS_PATH = '/.well-known/jwks.json';
export const AUTH_METHODS = ['client_secret_basic', 'client_secret_post'] as const;

const Url = Type.String({ format: 'uri', maxLength: 2048 });
const Names = Type.Array(Type.String({ maxLength: 100 }), { maxItems: 20 });
const Metadata = Type.Object(
  {
    issuer: Url,
    token_endpoint: Url,
    jwks_uri: Url,
    grant_types_supported: Names,
    token_endpoint_auth_methods_supported: Names,
    scopes_supported: Names,
    response_types_supported: Names,
    service_documentation: Url,
  },
  { description: 'RFC 8414 authorization server metadata.' },
);

const Jwks = Type.Object(
  {
    keys: Type.Array(
      Type.Object(
        {
          kty: Type.String({ maxLength: 10 }),
          crv: Type.String({ maxLength: 10 }),
          x: Type.String({ maxLength: 100 }),
          y: Type.String({ maxLength: 100 }),
          kid: Type.String({ maxLength: 100 }),
          alg: Type.String({ maxLength: 10 }),
          use: Type.String({ maxLength: 10 }),
        },
        { description: 'A public key (RFC 7517) that may have signed a token alive now.' },
      ),
      { maxItems: 100 },
    ),
  },
  { description: 'The public keys of the access tokens (RFC 7517), newest first.' },
);

/**
 * `GET /.well-known/oauth-authorization-server` (RFC 8414) and `GET /.well-known/jwks.json` (docs/tokens.md): what an
 * OAuth client discovers, and the public keys a token may be checked with. Both need no key and count nothing.
 */
export function wellKnownRoutes(app: App, { publicUrl, keys }: { publicUrl: string; keys: SigningKeys }): void {
  const metadata = {
    issuer: publicUrl,
    token_endpoint: `${publicUrl}${TOKEN_PATH}`,
    jwks_uri: `${publicUrl}${JWKS_PATH}`,
    grant_types_supported: [GRANT_TYPE],
    token_endpoint_auth_methods_supported: [...AUTH_METHODS],
    scopes_supported: SCOPE_NAMES,
    // No authorization endpoint: the client credentials grant needs none.
    response_types_supported: [],
    service_documentation: `${publicUrl}/docs`,
  };
  const common = { tags: [TAG.tokens], 'x-stability': 'beta', security: [], querystring: NoQuery };
  app.get(
    METADATA_PATH,
    {
      config: COUNTS_NOTHING,
      schema: {
        operationId: 'getAuthorizationServerMetadata',
        summary: 'OAuth authorization server metadata',
        description: `What an OAuth client discovers (RFC 8414): the token endpoint, the JWKS (${ALGORITHM}), the grant, the client authentication methods and the scopes. Needs no key and counts nothing.`,
        ...common,
        response: { 200: Metadata, ...problemResponses(400, 429) },
      },
    },
    async () => metadata,
  );
  app.get(
    JWKS_PATH,
    {
      config: COUNTS_NOTHING,
      schema: {
        operationId: 'getJsonWebKeySet',
        summary: 'The public keys of access tokens',
        description:
          'Every public key that may have signed an access token alive now (RFC 7517): the current one, and the ' +
          'ones before it as long as their tokens may live. Needs no key and counts nothing.',
        ...common,
        response: { 200: Jwks, ...problemResponses(400, 429, 500, 503) },
      },
    },
    async () => keys.jwks(),
  );
}
