import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Clock } from '../clock.js';
import { type Db, isEmbedded } from '../db/database.js';
import { transactionsOf } from '../db/group-commit.js';
import { ProblemError } from '../http/problems.js';
import { conflictResponse, problemResponses } from '../http/responses.js';
import { ref } from '../http/schemas.js';
import type { App } from '../http/types.js';
import { IdempotencyHeaders, idempotencyKeyOf, markReplayed, REPLAYED_RESPONSE_HEADER } from '../idempotency/header.js';
import { fingerprintOf, type IdempotentWrites } from '../idempotency/writes.js';
import { ownerOf } from '../keys/identify.js';
import { TAG } from '../http/tags.js';
import { catchUp } from '../orders/fulfilment.js';
import type { OrderMoves } from '../orders/moves.js';
import { type KeyClock, keyNow } from '../clock.js';
import { advancedTo, frozen, MAX_ADVANCE_MS, resumed } from './clock.js';
import type { TestClocks } from './clocks.js';
import { clockView, TEST_MODE_ABOUT, TEST_MODE_CONFIG, testKeyOf } from './get-clock.js';
import { ClockAdvance, TestClock } from './schemas.js';

export interface MoveClockDeps {
  clocks: TestClocks;
  writes: IdempotentWrites;
  clock: Clock;
  db: Db;
  moves: OrderMoves;
}

/** How a move turns the key's clock at the real instant `realNow` into the next (throws a problem to refuse). */
type Move = (current: KeyClock, realNow: number, body: ClockAdvance | undefined) => KeyClock;

const IDEMPOTENT =
  'Send an `Idempotency-Key` to make a retry safe: a replay gets the original answer and moves nothing.';

/** A move's route: the clock read and written in one transaction, once per `Idempotency-Key`. */
function moveRoute(
  app: App,
  { clocks, writes, clock, db, moves }: MoveClockDeps,
  operationId: string,
  schema: object,
  next: Move,
): void {
  app.post(
    `/test-clock/${operationId.replace(/TestClock$/, '')}`,
    {
      config: TEST_MODE_CONFIG,
      schema: {
        operationId,
        tags: [TAG.testing],
        'x-stability': 'experimental',
        headers: IdempotencyHeaders,
        ...schema,
      },
    },
    async (request: FastifyRequest, reply: FastifyReply): Promise<TestClock> => {
      const key = testKeyOf(request);
      const body = request.body as ClockAdvance | undefined;
      const answered = await writes.run(
        ownerOf(request),
        idempotencyKeyOf(request.headers as { 'idempotency-key'?: string }),
        () => fingerprintOf(operationId, body ?? {}),
        async (trx) => {
          // Concurrent moves of one clock, through any instances, each apply to the one before: the key's row
          // is held until this one commits (PostgreSQL; SQLite's writes already come one at a time).
          if (!isEmbedded(db))
            await trx.selectFrom('api_keys').select('id').where('id', '=', key.id).forUpdate().execute();
          const realNow = clock();
          const moved = next(await clocks.of(key.id, trx), realNow, body);
          await clocks.set(trx, key.id, moved);
          return { status: 200, body: clockView(moved, realNow) };
        },
      );
      markReplayed(reply, answered);
      // As if the time had passed: the key's orders make every move that fell due by its new now, each
      // at its instant, before the answer (a replay's too: what the first left undone, a crash say).
      await catchUp(moves, transactionsOf(db), key.id, Date.parse(answered.body.now));
      return answered.body;
    },
  );
}

const moved = (description: string) => ({ 200: { ...ref(TestClock), description, headers: REPLAYED_RESPONSE_HEADER } });

/** `POST /test-clock/advance` (advanceTestClock): the key's clock forward, by `seconds` or to `to`. */
export function advanceTestClock(app: App, deps: MoveClockDeps): void {
  const schema = {
    summary: "Move your test key's clock forward",
    description:
      `Moves your key's clock forward by \`seconds\` or to \`to\`, as if the time had passed: a window that would ` +
      `have emptied is empty, a ban that would have ended has ended. A frozen clock stays frozen where it lands. ` +
      `More than two years in one call is a \`400\`; a \`to\` before your key's now, \`409\` ` +
      `\`clock-cannot-go-back\`; neither moves the clock. ${IDEMPOTENT} ${TEST_MODE_ABOUT}`,
    body: ref(ClockAdvance),
    response: {
      ...moved('The clock, moved.'),
      ...problemResponses(400, 403, 422, 429),
      ...conflictResponse('clock-cannot-go-back', 'idempotency-key-in-progress'),
    },
  };
  moveRoute(app, deps, 'advanceTestClock', schema, (current, realNow, body) => {
    const now = keyNow(current, realNow);
    const to = body!.seconds !== undefined ? now + body!.seconds * 1000 : Date.parse(body!.to!);
    const at = (instant: number) => new Date(instant).toISOString();
    if (to < now)
      throw new ProblemError(
        'clock-cannot-go-back',
        `Your key's clock stands at ${at(now)}: it cannot go back to ${at(to)}. It did not move.`,
      );
    if (to - now > MAX_ADVANCE_MS) {
      throw new ProblemError('invalid-request', 'One advance moves the clock at most two years.', {
        errors: [{ in: 'body', name: 'to', message: `must be at most two years after your key's now (${at(now)})` }],
      });
    }
    return advancedTo(current, realNow, to);
  });
}

/** `POST /test-clock/freeze` (freezeTestClock): the key's clock stopped where it stands. */
export function freezeTestClock(app: App, deps: MoveClockDeps): void {
  const schema = {
    summary: "Stop your test key's clock",
    description:
      `Stops your key's clock where it stands: from now on it moves only by \`advance\`, until \`resume\`. ` +
      `Freezing a frozen clock changes nothing. ${IDEMPOTENT} ${TEST_MODE_ABOUT}`,
    response: {
      ...moved('The clock, frozen.'),
      ...problemResponses(403, 422, 429),
      ...conflictResponse('idempotency-key-in-progress'),
    },
  };
  moveRoute(app, deps, 'freezeTestClock', schema, (current, realNow) =>
    current.frozenAt === null ? frozen(current, realNow) : current,
  );
}

/** `POST /test-clock/resume` (resumeTestClock): the key's frozen clock running on from where it stands. */
export function resumeTestClock(app: App, deps: MoveClockDeps): void {
  const schema = {
    summary: "Start your test key's clock again",
    description:
      `Starts your key's frozen clock again, running on from where it stands (so it may then be behind the real ` +
      `time). Resuming a running clock changes nothing. ${IDEMPOTENT} ${TEST_MODE_ABOUT}`,
    response: {
      ...moved('The clock, running.'),
      ...problemResponses(403, 422, 429),
      ...conflictResponse('idempotency-key-in-progress'),
    },
  };
  moveRoute(app, deps, 'resumeTestClock', schema, (current, realNow) =>
    current.frozenAt === null ? current : resumed(current, realNow),
  );
}
