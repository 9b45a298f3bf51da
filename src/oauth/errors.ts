import type { FastifyReply } from 'fastify';
import Type from 'typebox';
import { CACHE_CONTROL_HEADER, NO_STORE } from '../http/responses.js';
import { WWW_AUTHENTICATE_HEADER } from '../keys/identify.js';

/** The errors of the token endpoint (RFC 6749 §5.2) it answers with. */
export type OAuthErrorCode = 'invalid_request' | 'invalid_client' | 'unsupported_grant_type' | 'invalid_scope';

/** RFC 6749 §5.2's shape: not a problem (RFC 9457), as OAuth clients expect. */
export const OAuthErrorBody = Type.Object(
  {
    error: Type.String({ description: 'An error code of RFC 6749 §5.2.', maxLength: 50 }),
    error_description: Type.String({ description: 'What went wrong, for a person.', maxLength: 500 }),
  },
  {
    $id: 'OAuthError',
    title: 'OAuthError',
    description: 'An error of the token endpoint, as RFC 6749 §5.2 shapes it.',
  },
);

/** A token request refused in OAuth's own words; `basic` when the client tried HTTP Basic (its challenge follows). */
export class OAuthError {
  constructor(
    readonly error: OAuthErrorCode,
    readonly description: string,
    readonly basic = false,
  ) {}

  get status(): number {
    return this.error === 'invalid_client' ? 401 : 400;
  }

  send(reply: FastifyReply): FastifyReply {
    reply.code(this.status).header(CACHE_CONTROL_HEADER, NO_STORE).header('Pragma', 'no-cache');
    if (this.basic) reply.header(WWW_AUTHENTICATE_HEADER, 'Basic realm="petstore"');
    return reply.send({ error: this.error, error_description: this.description });
  }
}
