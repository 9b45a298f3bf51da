import { COUNTS_NOTHING } from '../http/stages.js';
import type { FastifyRequest } from 'fastify';
import type { Clock } from '../clock.js';
import { ProblemError } from '../http/problems.js';
import { problemResponses } from '../http/responses.js';
import { ref } from '../http/schemas.js';
import type { App } from '../http/types.js';
import { keyOf } from '../keys/identify.js';
import type { KeyRecord } from '../keys/repository.js';
import { TAG } from '../http/tags.js';
import { type KeyClock, keyNow, offsetAt, REAL_TIME } from '../clock.js';
import { TestClock } from './schemas.js';

/**
 * What every test-mode operation is: for test keys, uncounted, answered in
 * any version and during a ban (docs/testing-clients.md#testing-your-client-in-seconds).
 */
export const TEST_MODE_ABOUT =
  'For test keys (`pet_test_…`) only (a live key gets `403` `test-key-required`: its time is always the real ' +
  'time). Counts nothing toward your plan and is answered during a ban and in every version, past its sunset too; ' +
  'like every path that counts nothing, it is throttled per key (`429` `uncounted-throttled`, never a ban).';

/**
 * The route options every test-mode operation shares: answered past a
 * version's sunset (versions/stage.ts), and counting nothing (so neither graded nor meeting faults).
 */
export const TEST_MODE_CONFIG = { everyVersion: true, ...COUNTS_NOTHING } as const;

/** The clock as the operations answer it, at the real instant `realNow`. */
export function clockView(clock: KeyClock, realNow: number): TestClock {
  return {
    now: new Date(keyNow(clock, realNow)).toISOString(),
    offsetSeconds: offsetAt(clock, realNow) / 1000,
    frozen: clock.frozenAt !== null,
  };
}

/** The key of a request for a test-mode operation: a test key, else `403`. */
export function testKeyOf(request: FastifyRequest): KeyRecord {
  const key = keyOf(request);
  if (!key.test)
    throw new ProblemError(
      'test-key-required',
      'Only a test key (pet_test_…) has a clock and data a test may control; a live key is always on the real time.',
    );
  return key;
}

/** `GET /test-clock` (getTestClock): where a test key's clock stands. */
export function getTestClock(app: App, { clock }: { clock: Clock }): void {
  app.get(
    '/test-clock',
    {
      config: TEST_MODE_CONFIG,
      schema: {
        operationId: 'getTestClock',
        summary: "Your test key's clock",
        description:
          `Where your key's clock stands: its now, how far it is from the real now, and whether it is frozen. ` +
          `Every time-dependent behaviour of the key goes by it: both windows (the day's midnight is the key's), ` +
          `\`Retry-After\`, \`RateLimit\` and bans. ${TEST_MODE_ABOUT}`,
        tags: [TAG.testing],
        'x-stability': 'experimental',
        response: { 200: ref(TestClock), ...problemResponses(403, 429) },
      },
    },
    // The clock as this request's identity read it (keys/identify.ts), at the real now.
    async (request) => {
      testKeyOf(request);
      return clockView(request.identity.clock ?? REAL_TIME, clock());
    },
  );
}
