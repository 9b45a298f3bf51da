import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import Type from 'typebox';
import { ProblemError } from '../http/problems.js';
import { StringEnum } from '../http/schemas.js';
import type { App } from '../http/types.js';
import { keyCaller } from '../ratelimit/callers.js';
import { FAULTS, MAX_SEED } from '../faults/profile.js';
import { MAX_LIMIT, PLAN_NAMES } from '../ratelimit/plans.js';
import type { LimiterStore } from '../ratelimit/store.js';
import { VERSIONS } from '../versions/versions.js';
import { KeyInputError, type KeyRecord, type KeysRepository, NAME_MAX_LENGTH, NAME_PATTERN } from './repository.js';
import { KeyView, keyView } from './views.js';

const PlanBody = {
  plan: StringEnum(PLAN_NAMES),
  perMinute: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_LIMIT })),
  perDay: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_LIMIT })),
};
const Name = Type.String({ maxLength: NAME_MAX_LENGTH, pattern: NAME_PATTERN });
const Version = StringEnum(VERSIONS);
/** A test key's standing fault profile as asked for (faults/profile.ts judges the rest). */
const FaultsBody = Type.Object(
  {
    rate: Type.Number({ minimum: 0, maximum: 1 }),
    faults: Type.Optional(Type.Array(StringEnum(FAULTS), { minItems: 1, maxItems: FAULTS.length, uniqueItems: true })),
    latencyMs: Type.Optional(
      Type.Union([
        Type.Object({ min: Type.Integer(), max: Type.Integer() }, { additionalProperties: false }),
        Type.Null(),
      ]),
    ),
    seed: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_SEED })),
  },
  { additionalProperties: false },
);
/** No control characters: PostgreSQL cannot hold NUL, and every store must answer the same (a 400). */
const IdParams = Type.Object({ id: Type.String({ maxLength: 100, pattern: '^[^\\u0000-\\u001f\\u007f]+$' }) });

/**
 * `/admin/keys` on the admin listener, behind `Authorization: Bearer $ADMIN_TOKEN`: the same
 * operations as the CLI's `petstore keys …`.
 */
export function adminKeyRoutes(
  app: App,
  { keys, limiter, token }: { keys: KeysRepository; limiter: LimiterStore; token: string },
): void {
  app.addHook('onRequest', bearerCheck(token));
  const view = async (record: KeyRecord | undefined, id: string) => {
    if (!record) throw new ProblemError('not-found', `There is no key ${id}.`);
    return keyView(record, await limiter.banOf(keyCaller(record.id), record.unbanSeq));
  };
  collectionRoutes(app, keys, limiter);
  app.get('/admin/keys/:id', { schema: { params: IdParams, response: { 200: KeyView } } }, async (request) =>
    view(await keys.get(request.params.id), request.params.id),
  );
  app.patch(
    '/admin/keys/:id',
    {
      schema: {
        params: IdParams,
        body: Type.Object(PlanBody, { additionalProperties: false }),
        response: { 200: KeyView },
      },
    },
    async (request) => view(await asInput(() => keys.setPlan(request.params.id, request.body)), request.params.id),
  );
  // The version the key's requests get when they name none, from their next one on, on every instance.
  app.put(
    '/admin/keys/:id/version',
    {
      schema: {
        params: IdParams,
        body: Type.Object({ apiVersion: Version }, { additionalProperties: false }),
        response: { 200: KeyView },
      },
    },
    async (request) =>
      view(await asInput(() => keys.setVersion(request.params.id, request.body.apiVersion)), request.params.id),
  );
  // A test key's standing fault profile: set (its seeded sequence starts over) or removed.
  app.put(
    '/admin/keys/:id/faults',
    { schema: { params: IdParams, body: FaultsBody, response: { 200: KeyView } } },
    async (request) => view(await asInput(() => keys.setFaults(request.params.id, request.body)), request.params.id),
  );
  app.delete('/admin/keys/:id/faults', { schema: { params: IdParams, response: { 200: KeyView } } }, async (request) =>
    view(await asInput(() => keys.setFaults(request.params.id, null)), request.params.id),
  );
  app.post('/admin/keys/:id/revoke', { schema: { params: IdParams, response: { 200: KeyView } } }, async (request) =>
    view(await keys.revoke(request.params.id), request.params.id),
  );
  app.post('/admin/keys/:id/unban', { schema: { params: IdParams, response: { 200: KeyView } } }, async (request) => {
    const record = await keys.requestUnban(request.params.id);
    // Lifted here at once; other instances apply the signal written to the key's row.
    if (record) await limiter.unban(keyCaller(record.id));
    return view(record, request.params.id);
  });
}

/** Every admin request's first step: `Authorization: Bearer $ADMIN_TOKEN`, or a 401 problem. */
function bearerCheck(token: string) {
  const expected = digest(token);
  return async (request: FastifyRequest): Promise<void> => {
    // The scheme's name is case-insensitive (RFC 9110 §11.1).
    const sent = /^Bearer +(.+)$/i.exec(request.headers.authorization ?? '')?.[1];
    // Compared as digests, in constant time: the answer must not leak how much of a guess was right.
    if (!sent || !timingSafeEqual(digest(sent), expected)) {
      throw new ProblemError('unauthorized', 'The admin API needs Authorization: Bearer <ADMIN_TOKEN>.');
    }
  };
}

/** `POST /admin/keys` (the only answer that ever carries a full key) and `GET /admin/keys`. */
function collectionRoutes(app: App, keys: KeysRepository, limiter: LimiterStore): void {
  app.post(
    '/admin/keys',
    {
      schema: {
        body: Type.Object(
          {
            name: Type.Optional(Name),
            ...PlanBody,
            test: Type.Optional(Type.Boolean()),
            faults: Type.Optional(FaultsBody),
            apiVersion: Type.Optional(Version),
          },
          { additionalProperties: false },
        ),
      },
    },
    async (request, reply) => {
      const { record, key } = await asInput(() => keys.create(request.body));
      return reply
        .code(201)
        .header('cache-control', 'no-store')
        .send({ ...keyView(record, null), key });
    },
  );
  app.get('/admin/keys', async () => ({
    data: await Promise.all(
      (await keys.list()).map(async (k) => keyView(k, await limiter.banOf(keyCaller(k.id), k.unbanSeq))),
    ),
  }));
}

/** A change the store refused as input becomes a 400 problem naming the field. */
async function asInput<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof KeyInputError) {
      throw new ProblemError('invalid-request', error.message, {
        errors: [{ in: 'body', name: `/${error.field}`, message: error.message }],
      });
    }
    throw error;
  }
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}
