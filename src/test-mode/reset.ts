import { problemResponses } from '../http/responses.js';
import { ref } from '../http/schemas.js';
import type { App } from '../http/types.js';
import { TAG } from '../http/tags.js';
import { TEST_MODE_ABOUT, TEST_MODE_CONFIG, testKeyOf } from './get-clock.js';
import { TestDataRemoved } from './schemas.js';
import type { TestData } from './test-data.js';
import type { KeyRecord } from '../keys/repository.js';

export interface ResetDeps {
  testData: TestData;
  /** Told of each reset once its data is gone: the report card notes it (report-card/routes.ts `cardReset`). */
  afterReset: (key: KeyRecord) => void | Promise<void>;
}

/**
 * `DELETE /test-data` (resetTestData, docs/testing-clients.md#testing-your-client-in-seconds): a test key starts over
 * as a new key of its plan (./test-data.ts).
 */
export function resetTestData(app: App, { testData, afterReset }: ResetDeps): void {
  app.delete(
    '/test-data',
    {
      config: TEST_MODE_CONFIG,
      schema: {
        operationId: 'resetTestData',
        summary: "Start your test key's data over",
        description:
          `Removes everything your test key made (its orders, events, webhook endpoints and their deliveries, ` +
          `Idempotency-Key records, and its child keys with all of theirs), clears its windows, its ban and the ` +
          `history that doubles bans, puts its clock back to the real time, running, and starts its fault sequence ` +
          `over. Your key, its plan and its pinned version stay. Answers how many of each of your key's own were ` +
          `removed. ${TEST_MODE_ABOUT}`,
        tags: [TAG.testing],
        'x-stability': 'experimental',
        response: { 200: ref(TestDataRemoved), ...problemResponses(403, 429) },
      },
    },
    async (request): Promise<TestDataRemoved> => {
      const key = testKeyOf(request);
      const removed = await testData.reset(key.id, key.faults !== null);
      await afterReset(key);
      return removed;
    },
  );
}
