import { randomBytes } from 'node:crypto';
import { systemClock } from '../../src/clock.js';
import { KeysRepository } from '../../src/keys/repository.js';
import { type TestDatabase, testDatabase } from './database.js';
import { type Server, startServer } from './process.js';

/** Two processes of the built service sharing one PostgreSQL schema and one Redis, under a key prefix of their own. */
export interface ScaledOut {
  store: TestDatabase;
  keys: KeysRepository;
  a: Server;
  b: Server;
  /** A new key, once both instances know it (a key made elsewhere works on a running instance within a second). */
  newKey(input: Parameters<KeysRepository['create']>[0]): ReturnType<KeysRepository['create']>;
  stop(): Promise<void>;
}

/** `more`: settings both instances share besides the stores (a `PUBLIC_URL`, as behind one load balancer). */
export async function scaledOut(redisUrl: string, more: Record<string, string> = {}): Promise<ScaledOut> {
  const store = await testDatabase({ kind: 'postgres' });
  const keys = new KeysRepository(store.db, systemClock);
  const env = {
    DATABASE_URL: store.url,
    REDIS_URL: redisUrl,
    REDIS_KEY_PREFIX: `petstore-test-${randomBytes(4).toString('hex')}:`,
    ...more,
  };
  const [a, b] = await Promise.all([startServer(env), startServer(env)]);
  return {
    store,
    keys,
    a,
    b,
    async newKey(input) {
      const created = await keys.create(input);
      for (const server of [a, b])
        while ((await fetch(`${server.url}/usage`, { headers: { 'x-api-key': created.key } })).status !== 200)
          await new Promise((resolve) => setTimeout(resolve, 25));
      return created;
    },
    async stop() {
      await Promise.all([a.stop(), b.stop()]);
      await store.db.destroy();
      await store.drop();
    },
  };
}
