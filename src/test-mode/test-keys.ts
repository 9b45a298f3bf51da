import { createHmac } from 'node:crypto';
import type { Db } from '../db/database.js';
import { isEmbedded } from '../db/database.js';
import { conflictResponse, problemResponses } from '../http/responses.js';
import { ProblemError } from '../http/problems.js';
import { bodyOptional, ref } from '../http/schemas.js';
import type { App } from '../http/types.js';
import { IdempotencyHeaders, idempotencyKeyOf, markReplayed, REPLAYED_RESPONSE_HEADER } from '../idempotency/header.js';
import { fingerprintOf, type IdempotentWrites } from '../idempotency/writes.js';
import { ownerOf } from '../keys/identify.js';
import { generateKey, generateKeyId, testKeyFrom } from '../keys/key-format.js';
import { type KeyRecord, type KeysRepository, policyOfKey } from '../keys/repository.js';
import { TAG } from '../http/tags.js';
import { testKeyOf } from './get-clock.js';
import { TestKey, TestKeyLimits, TestKeyParams } from './schemas.js';
import { aliveDescendants, childLimits, MAX_CHILDREN, MAX_DESCENDANTS, rootOf, treeFull } from './key-tree.js';
import { childrenOf, type TestData } from './test-data.js';

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
      // They count, as any operation does, but the report card does not grade them.
      config: { graded: false },
      preValidation: bodyOptional,
      schema: {
        operationId: 'createTestKey',
        summary: 'Make a child test key',
        description:
          `For test keys only: a new test key of your key's plan, limits and version, with its own clock, data and ` +
          `limits, for one job of a parallel test run. It may be given lower \`perMinute\` and \`perDay\` than ` +
          `yours (a test that meets the limit in a few requests), never higher (\`400\`). Its key is shown this ` +
          `once (and to a retry with the same \`Idempotency-Key\`). Your key has at most ${MAX_CHILDREN} children ` +
          `alive, and your root test key (the one no key made) at most ${MAX_DESCENDANTS} keys alive below it at ` +
          `every depth (\`409\` \`test-key-limit\`); \`DELETE /test-keys/{keyId}\` removes one, and your ` +
          `\`DELETE /test-data\` removes them all. A live key gets \`403\` \`test-key-required\`.`,
        tags: [TAG.testing],
        'x-stability': 'experimental',
        headers: IdempotencyHeaders,
        body: ref(TestKeyLimits),
        // No body is the empty one: the parent's limits (openapi/transforms.ts says so in the document).
        'x-body-optional': true,
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
      const asked = request.body as TestKeyLimits;
      const limits = childLimits(policyOfKey(parent), asked);
      const answered = await writes.run(
        ownerOf(request),
        idempotencyKey,
        () => fingerprintOf('createTestKey', asked),
        async (trx) => {
          // One key at a time under one root on PostgreSQL: the counts and the insert stand together.
          const root = await rootOf(trx, parent.id);
          if (pg) await trx.selectFrom('api_keys').select('id').where('id', '=', root).forUpdate().execute();
          const full = treeFull((await childrenOf(trx, parent.id)).length, await aliveDescendants(trx, root));
          if (full) throw full;
          const id = generateKeyId();
          const { record, key } = await keys.create(childOf(parent, id, keyOf(id), limits), trx);
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

/** What a child is made of: its parent's plan and version, and its limits (its parent's, or lower). */
function childOf(parent: KeyRecord, id: string, key: string, limits: { perMinute: number; perDay: number }) {
  const own = parent.plan === 'enterprise' ? limits : undefined;
  const lowered = parent.plan !== 'enterprise' ? limits : undefined;
  return {
    name: `${parent.name} (child)`.slice(0, 100),
    plan: parent.plan,
    ...own,
    ...(lowered ? { lowered } : {}),
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
      // They count, as any operation does, but the report card does not grade them.
      config: { graded: false },
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
