import type { Db } from './database.js';

/** A secret of the service (migration 010), the same for every instance on the store. */
export async function serviceSecret(db: Db, name: 'cursors' | 'test-keys'): Promise<Buffer> {
  const row = await db.selectFrom('service_secrets').select('value').where('name', '=', name).executeTakeFirstOrThrow();
  return Buffer.from(row.value, 'base64');
}
