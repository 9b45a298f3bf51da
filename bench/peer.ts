/**
 * A peer: what a plain Fastify 5 app pays for the best-known rate limiter of its ecosystem,
 * @fastify/rate-limit, registered globally and keyed by the `x-api-key` header, with a limit nothing
 * reaches. It answers `GET /pets/:petId` with the bytes of the service's `GET /pets/1` (BODY), as JSON,
 * and checks nothing else: no key lookup, no plans, no bans, no validation. With PEER_REDIS_URL its
 * counts live in Redis (one script per request, under the key prefix PEER_NAMESPACE), else in memory.
 *
 * With PEER_DATABASE_URL it also answers the store's orders as a user would write them over the
 * service's own tables (issue 32): `pg`'s Pool of 10, a key's row kept in memory for a second (no
 * invalidation), `GET /store/orders` one `SELECT` of the key's 21 newest orders (a page of 20 and
 * whether more follow), `POST /store/orders` one `INSERT` (the store's triggers write its event, as
 * for the service). No idempotency, no ETag, no validation beyond the two numbers.
 *
 * With HEADERS (a JSON object: the headers of the service's own answer, as the floor's, bench/baseline.ts) every
 * `GET /pets/:petId` answer carries them as they are, in place of the limiter's own three: the same answer, byte
 * for byte but the date, with nothing computed behind it. What the client pays to read the service's answer is
 * then the same on both sides, and the comparison is of the work behind the answer alone.
 */
import { createHash } from 'node:crypto';
import rateLimit from '@fastify/rate-limit';
import Fastify, { type FastifyReply, type FastifyRequest } from 'fastify';
import { Redis } from 'ioredis';
import pg from 'pg';

const body = process.env.BODY ?? '{}';
const headers = process.env.HEADERS ? (JSON.parse(process.env.HEADERS) as Record<string, string>) : undefined;
const redisUrl = process.env.PEER_REDIS_URL;
const redis = redisUrl ? new Redis(redisUrl, { maxRetriesPerRequest: 1 }) : undefined;
const databaseUrl = process.env.PEER_DATABASE_URL;

const app = Fastify({ logger: false });
await app.register(rateLimit, {
  global: true,
  // Far beyond what a run sends: every request is counted, none is refused.
  max: 2_000_000_000,
  timeWindow: '1 minute',
  keyGenerator: (request) => String(request.headers['x-api-key'] ?? request.ip),
  ...(redis ? { redis, nameSpace: process.env.PEER_NAMESPACE } : {}),
});
app.get('/pets/:petId', (_request, reply) => {
  // A string with its content type set is sent as it is, not serialised again.
  if (headers) reply.headers(headers).send(body);
  else reply.type('application/json; charset=utf-8').send(body);
});
const pool = databaseUrl ? ordersRoutes(new pg.Pool({ connectionString: databaseUrl, max: 10 })) : undefined;
await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT) });

process.on('SIGTERM', () => {
  void app.close().then(async () => {
    redis?.disconnect();
    await pool?.end();
    process.exit(0);
  });
});

function ordersRoutes(pool: pg.Pool): pg.Pool {
  const keys = new Map<string, { id: string | null; at: number }>();
  async function keyId(request: FastifyRequest, reply: FastifyReply): Promise<string | null> {
    const key = String(request.headers['x-api-key'] ?? '');
    const cached = keys.get(key);
    if (cached && Date.now() - cached.at < 1_000)
      return cached.id ?? (reply.code(401).send({ error: 'unauthorized' }), null);
    const hash = createHash('sha256').update(key).digest('hex');
    const { rows } = await pool.query<{ id: string }>(
      'select id from api_keys where key_hash = $1 and revoked_at is null',
      [hash],
    );
    const id = rows[0]?.id ?? null;
    keys.set(key, { id, at: Date.now() });
    return id ?? (reply.code(401).send({ error: 'unauthorized' }), null);
  }
  app.get('/store/orders', async (request, reply) => {
    const owner = await keyId(request, reply);
    if (owner === null) return reply;
    const { rows } = await pool.query(
      'select id, pet_id as "petId", quantity, ship_date as "shipDate", status, complete from orders where api_key_id = $1 order by id desc limit 21',
      [owner],
    );
    const data = rows.slice(0, 20).map((row) => ({ ...row, id: Number(row.id), complete: row.complete === 1 }));
    return { data, nextCursor: rows.length > 20 ? String(data.at(-1)!.id) : null };
  });
  app.post<{ Body: { petId?: unknown; quantity?: unknown } }>('/store/orders', async (request, reply) => {
    const owner = await keyId(request, reply);
    if (owner === null) return reply;
    const { petId, quantity = 1 } = request.body ?? {};
    if (!Number.isInteger(petId) || !Number.isInteger(quantity))
      return reply.code(400).send({ error: 'petId and quantity are whole numbers' });
    const now = new Date().toISOString();
    const { rows } = await pool.query<{ id: string }>(
      "insert into orders (api_key_id, pet_id, quantity, ship_date, status, complete, created_at) values ($1, $2, $3, $4, 'placed', 0, $4) returning id",
      [owner, petId, quantity, now],
    );
    return reply
      .code(201)
      .send({ id: Number(rows[0]!.id), petId, quantity, shipDate: now, status: 'placed', complete: false });
  });
  return pool;
}
