import { createHmac } from 'node:crypto';
import type { Db } from '../db/database.js';
import { isEmbedded } from '../db/database.js';
import { ProblemError } from '../http/problems.js';
import { conflictResponse, problemResponses } from '../http/responses.js';
import { ref } from '../http/schemas.js';
import type { App } from '../http/types.js';
import { IdempotencyHeaders, idempotencyKeyOf, markReplayed, REPLAYED_RESPONSE_HEADER } from '../idempotency/header.js';
import { fingerprintOf, type IdempotentWrites } from '../idempotency/writes.js';
import { ownerOf } from '../keys/identify.js';
import { generateKey, generateKeyId, testKeyFrom } from '../keys/key-format.js';
import type { KeyRecord, KeysRepository } from '../keys/repository.js';
import { UNGRADED } from '../report-card/watch.js';
import { TAG } from '../openapi/tags.js';
import { testKeyOf } from './get-clock.js';
import { TestKey, TestKeyParams } from './schemas.js';
import { childrenOf, type TestData } from './test-data.js';

/** The most children a test key has alive at once (docs/testing-clients.md#testing-your-client-in-seconds). */
export const MAX_CHILDREN = 100;

export interface TestKeysDeps {
  db: Db;
  keys: KeysRepository;
  writes: IdempotentWrites;
  /** The secret a child's key is derived with when asked for with an `Idempotency-Key` (migration 012). */
  testKeySecret: Buffer;
}

/**
 * `POST /test-keys` (createTestKey): a child test key for one job of a parallel test run, with the
 * caller's plan, limits and version, and its own clock, data and limits. Asked for with an
 * `Idempotency-Key`, the child's key is derived from its id with a secret of the store's, so that a
 * retry is shown the same key though no key is ever stored; without one, it is random.
 */
export function createTestKey(app: App, { db, keys, writes, testKeySecret }: TestKeysDeps): void {
  const pg = !isEmbedded(db);
  app.post(
    '/test-keys',
    {
      config: UNGRADED,
      schema: {
        operationId: 'createTestKey',
        summary: 'Make a child test key',
        description:
          `For test keys only: a new test key of your key's plan, limits and version, with its own clock, data and ` +
          `limits, for one job of a parallel test run. Its key is shown this once (and to a retry with the same ` +
          `\`Idempotency-Key\`). Your key has at most ${MAX_CHILDREN} children alive (\`409\` \`test-key-limit\`); ` +
          `\`DELETE /test-keys/{keyId}\` removes one, and your \`DELETE /test-data\` removes them all. A live key ` +
          `gets \`403\` \`test-key-required\`.`,
        tags: [TAG.testing],
        'x-stability': 'experimental',
        headers: IdempotencyHeaders,
        response: {
          201: { ...ref(TestKey), description: 'The child, with its key.', headers: REPLAYED_RESPONSE_HEADER },
          ...problemResponses(400, 403, 415),
          ...conflictResponse('test-key-limit', 'idempotency-key-in-progress'),
        },
      },
    },
    async (request, reply) => {
      const parent = testKeyOf(request);
      const idempotencyKey = idempotencyKeyOf(request.headers as { 'idempotency-key'?: string });
      const keyOf = (id: string) =>
        idempotencyKey === undefined
          ? generateKey(true)
          : testKeyFrom(createHmac('sha256', testKeySecret).update(id).digest());
      let made: string | undefined;
      const answered = await writes.run(
        ownerOf(request),
        idempotencyKey,
        () => fingerprintOf('createTestKey'),
        async (trx) => {
          // One child at a time per parent on PostgreSQL: the count and the insert stand together.
          if (pg) await trx.selectFrom('api_keys').select('id').where('id', '=', parent.id).forUpdate().execute();
          if ((await childrenOf(trx, parent.id)).length >= MAX_CHILDREN) {
            throw new ProblemError(
              'test-key-limit',
              `Your key has ${MAX_CHILDREN} child keys alive: delete one (DELETE /test-keys/{keyId}) or reset ` +
                `(DELETE /test-data).`,
            );
          }
          const id = generateKeyId();
          const { record, key } = await keys.create(childOf(parent, id, keyOf(id)), trx);
          made = key;
          return { status: 201, body: viewOf(record) };
        },
      );
      markReplayed(reply, answered);
      keys.created(answered.body.id);
      return reply.code(201).send({ ...answered.body, key: made ?? keyOf(answered.body.id) });
    },
  );
}

/** What a child is made of: its parent's plan, limits and version. */
function childOf(parent: KeyRecord, id: string, key: string) {
  const limits = parent.plan === 'enterprise' ? { perMinute: parent.perMinute!, perDay: parent.perDay! } : {};
  return {
    name: `${parent.name} (child)`.slice(0, 100),
    plan: parent.plan,
    ...limits,
    apiVersion: parent.apiVersion,
    test: true,
    parentId: parent.id,
    id,
    key,
  };
}

function viewOf(record: KeyRecord): Omit<TestKey, 'key'> {
  return {
    id: record.id,
    name: record.name,
    plan: record.plan,
    apiVersion: record.apiVersion,
    parentId: record.parentId!,
    createdAt: record.createdAt,
  };
}

/** `DELETE /test-keys/{keyId}` (deleteTestKey): one of the caller's children, with everything it made. */
export function deleteTestKey(app: App, { db, testData }: { db: Db; testData: TestData }): void {
  app.delete(
    '/test-keys/:keyId',
    {
      config: UNGRADED,
      schema: {
        operationId: 'deleteTestKey',
        summary: 'Delete a child test key',
        description:
          'For test keys only: deletes one of your child keys, with its data and its own children; it answers ' +
          "`401` from its next request. A key that is not your child (another key's, or none) is a `404`. A live " +
          'key gets `403` `test-key-required`.',
        tags: [TAG.testing],
        'x-stability': 'experimental',
        params: TestKeyParams,
        response: { 204: { description: 'Deleted: no content.', type: 'null' }, ...problemResponses(400, 403, 404) },
      },
    },
    async (request, reply) => {
      const parent = testKeyOf(request);
      const { keyId } = request.params;
      if (!(await childrenOf(db, parent.id)).includes(keyId))
        throw new ProblemError('not-found', `Your key has no child key ${keyId}.`);
      await testData.delete(keyId);
      return reply.code(204).send(null);
    },
  );
}
