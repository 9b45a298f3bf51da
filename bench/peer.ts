/**
 * A peer: what a plain Fastify 5 app pays for the best-known rate limiter of its ecosystem,
 * @fastify/rate-limit, registered globally and keyed by the `x-api-key` header, with a limit nothing
 * reaches. It answers `GET /pets/:petId` with the bytes of the service's `GET /pets/1` (BODY), as JSON,
 * and checks nothing else: no key lookup, no plans, no bans, no validation. With PEER_REDIS_URL its
 * counts live in Redis (one script per request, under the key prefix PEER_NAMESPACE), else in memory.
 */
import rateLimit from '@fastify/rate-limit';
import Fastify from 'fastify';
import { Redis } from 'ioredis';

const body = process.env.BODY ?? '{}';
const redisUrl = process.env.PEER_REDIS_URL;
const redis = redisUrl ? new Redis(redisUrl, { maxRetriesPerRequest: 1 }) : undefined;

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
  reply.type('application/json; charset=utf-8').send(body);
});
await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT) });

process.on('SIGTERM', () => {
  void app.close().then(() => {
    redis?.disconnect();
    process.exit(0);
  });
});
