import type { Kysely, Migration } from 'kysely';

/**
 * The signing keys of access tokens (oauth/signing-keys.ts): one per rotation period, shared by every instance
 * on the store. The private half stays in its row; the public half is served at `/.well-known/jwks.json`.
 */
export const oauthSigningKeys: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('oauth_signing_keys')
      .addColumn('kid', 'text', (c) => c.primaryKey())
      // ms since the epoch: when it starts signing, when it stops (the tokens it signed live on for their lifetime).
      .addColumn('not_before', 'bigint', (c) => c.notNull())
      .addColumn('not_after', 'bigint', (c) => c.notNull())
      .addColumn('public_jwk', 'text', (c) => c.notNull())
      .addColumn('private_jwk', 'text', (c) => c.notNull())
      .execute();
  },
};
