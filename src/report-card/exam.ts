import Type, { type Static } from 'typebox';
import { callerNow, type Clock } from '../clock.js';
import { eventIdOf, newNonce } from '../events/ids.js';
import type { StoredEvent } from '../events/schemas.js';
import { ProblemError } from '../http/problems.js';
import { problemResponses } from '../http/responses.js';
import { ref, StringEnum } from '../http/schemas.js';
import type { App } from '../http/types.js';
import type { Cards } from './cards.js';
import { cardStart } from './card.js';
import { keyOf } from '../keys/identify.js';
import { TAG } from '../http/tags.js';
import { endpointNotFound, type WebhookDeps } from '../webhooks/deps.js';
import { deliveryBody } from '../webhooks/dispatcher.js';
import type { Destination } from '../webhooks/endpoints.js';
import { EndpointParams } from '../webhooks/schemas.js';
import { Sender } from '../webhooks/sender.js';
import { EXAM_CASE_LIMIT_MS, EXAM_CASES, judged, type Sitting, type Written } from './exam-cases.js';

/**
 * The exam of a webhook receiver (docs/testing-clients.md#is-my-client-a-good-api-citizen): eight deliveries of a
 * `webhook.test` event, sent to a test key's endpoint (`valid` first, then the other seven at once), each judged by
 * the status it earns. Nothing
 * is written: the events are made in memory, no delivery enters the endpoint's log, and its count of failures
 * toward disabling it does not move. Only the key's report card learns how it went.
 */

/** The most a case's `ms` says: far more than its limit (a case is cut at its limit; this bounds a late timer). */
const MAX_MS = 60_000;

export const WebhookExamCase = Type.Object(
  {
    id: StringEnum(
      EXAM_CASES.map((c) => c.id),
      { description: 'The case; ids are part of the contract.' },
    ),
    expected: StringEnum(['2xx', '4xx'] as const, {
      description: 'The status class a receiver written to the specification answers.',
    }),
    got: Type.String({
      maxLength: 300,
      description:
        'What the receiver answered: its status (`"204"`), or why there was none (`"no answer within 5 s"`, ' +
        '`"connection refused"`, a refused destination).',
    }),
    passed: Type.Boolean(),
    ms: Type.Integer({
      format: 'int32',
      minimum: 0,
      maximum: MAX_MS,
      description: 'How long its answer took, from the start of connecting.',
    }),
  },
  { additionalProperties: false },
);

/** What `POST /webhook-endpoints/{endpointId}/exam` answers. */
export const WebhookExam = Type.Object(
  {
    passed: Type.Boolean({ description: 'Whether every case passed.' }),
    cases: Type.Array(WebhookExamCase, {
      minItems: EXAM_CASES.length,
      maxItems: EXAM_CASES.length,
      description: 'Every case, in the order sent.',
    }),
  },
  {
    $id: 'WebhookExam',
    additionalProperties: false,
    description: 'How a webhook receiver answered the eight deliveries of an exam.',
  },
);
export type WebhookExam = Static<typeof WebhookExam>;

/**
 * The attempts of exams under way on this instance, kept within the sender's shares (docs/webhooks.md): a
 * key's, and an endpoint's within it. An attempt past its share waits for a slot; its time limit
 * starts when it connects, not while it waits.
 */
class Shares {
  readonly #keys = new Map<string, number>();
  readonly #endpoints = new Map<string, number>();
  readonly #waiting: { keyId: string; endpointId: string; go: () => void }[] = [];

  constructor(private readonly limits: { perKey: number; perEndpoint: number }) {}

  /** A slot for one attempt, once there is one: resolves with what frees it. */
  async take(keyId: string, endpointId: string): Promise<() => void> {
    if (this.#fits(keyId, endpointId)) this.#count(keyId, endpointId, +1);
    else await new Promise<void>((go) => this.#waiting.push({ keyId, endpointId, go }));
    return () => this.#free(keyId, endpointId);
  }

  #free(keyId: string, endpointId: string): void {
    this.#count(keyId, endpointId, -1);
    for (let i = 0; i < this.#waiting.length;) {
      const waiter = this.#waiting[i]!;
      if (!this.#fits(waiter.keyId, waiter.endpointId)) i++;
      else {
        this.#waiting.splice(i, 1);
        this.#count(waiter.keyId, waiter.endpointId, +1);
        waiter.go();
      }
    }
  }

  #fits(keyId: string, endpointId: string): boolean {
    return (
      (this.#keys.get(keyId) ?? 0) < this.limits.perKey &&
      (this.#endpoints.get(endpointId) ?? 0) < this.limits.perEndpoint
    );
  }

  #count(keyId: string, endpointId: string, by: 1 | -1): void {
    for (const [counts, id] of [
      [this.#keys, keyId],
      [this.#endpoints, endpointId],
    ] as const) {
      const n = (counts.get(id) ?? 0) + by;
      if (n > 0) counts.set(id, n);
      else counts.delete(id);
    }
  }
}

const CASE_LIST = EXAM_CASES.map((c) => `- \`${c.id}\` (a \`${c.expected}\` expected): ${c.sends}.`).join('\n');

const DESCRIPTION =
  `Sends to the endpoint's URL eight deliveries of a \`webhook.test\` event (its \`data\` is ` +
  `\`{"endpointId": …}\`), each signed as every delivery is unless the case says otherwise, and answers how the ` +
  `receiver judged each once all are judged. The cases, in this order:\n\n${CASE_LIST}\n\n\`valid\` goes first; ` +
  `once it is answered, or ${EXAM_CASE_LIMIT_MS / 1000} s have passed, the other seven go at once (within the ` +
  `sender's shares of your key and of the endpoint). \`valid\` passes when its answer has the expected status ` +
  `class within ${EXAM_CASE_LIMIT_MS / 1000} s of connecting (or the service's webhook timeout, when shorter); ` +
  `each other case when its answer has it within ${(2 * EXAM_CASE_LIMIT_MS) / 1000} s of the exam's start (twice ` +
  `that timeout, when shorter), so that the exam answers within about ${(2 * EXAM_CASE_LIMIT_MS) / 1000 + 1} s ` +
  `whatever the receiver does. No answer in time, a failed connection or a refused destination (the service's ` +
  `own rules for where webhooks go apply, at every case) fail a case, and \`got\` says why. Every case but ` +
  `\`duplicate\` carries an event id of its own; none is a stored event (\`GET /events/{eventId}\` does not find ` +
  `them). The exam changes nothing: no event is written, no delivery enters the endpoint's log, its count of ` +
  `failures toward disabling it does not move, and a disabled endpoint can be examined too. The latest exam ` +
  `decides your report card's \`webhook-receiver\` check. For test keys' endpoints (a live key gets \`403\` ` +
  `\`test-key-required\`); it counts like the other endpoint operations. As it writes nothing, repeating it is ` +
  `safe (an \`Idempotency-Key\` is accepted and changes nothing).`;

/**
 * Sends the cases: the sender of deliveries, with the exam's time limits, within the key's share. `valid`
 * goes first, alone, with `limitMs` to be answered; once it is judged, the other seven go at once, each to
 * be answered within twice `limitMs` of the exam's start: whatever the receiver does, the exam is judged
 * within that (a client with a timeout of its own is answered in time).
 */
class Examiner {
  /** How long `valid` waits for its answer; the others, twice this from the exam's start. */
  readonly limitMs: number;
  readonly #sender: Sender;
  readonly #shares: Shares;
  readonly #clock: Clock;

  constructor({ clock, policy, sending }: Pick<WebhookDeps, 'clock' | 'policy' | 'sending'>) {
    this.limitMs = Math.min(EXAM_CASE_LIMIT_MS, sending.timeoutMs);
    this.#clock = clock;
    // The same destination check as every delivery's, redirects not followed.
    this.#sender = new Sender({ timeoutMs: this.limitMs, policy, now: clock });
    this.#shares = new Shares(sending.concurrency);
  }

  /** Every case, judged: `valid` first, then the others at once; in the order of `EXAM_CASES`. */
  async run(keyId: string, destination: Destination, sitting: Sitting): Promise<WebhookExam['cases']> {
    // Real time, as the sender's timers run: the exam's own bound, whatever a key's test clock says.
    const deadline = performance.now() + 2 * this.limitMs;
    const late = `no answer within ${(2 * this.limitMs) / 1000} s of the exam's start`;
    const [valid, ...rest] = EXAM_CASES;
    const first = await this.#judge(valid!, keyId, destination, sitting, () => this.limitMs);
    const others = rest.map((examCase) =>
      this.#judge(examCase, keyId, destination, sitting, () => deadline - performance.now(), late),
    );
    return [first, ...(await Promise.all(others))];
  }

  /**
   * One case, sent once the key's share has room for it, and cut when `timeLeft` (ms, read then) has
   * passed; `late`, what a case without an answer by then got, said alike whether it was sent or not.
   */
  async #judge(
    examCase: (typeof EXAM_CASES)[number],
    keyId: string,
    destination: Destination,
    sitting: Sitting,
    timeLeft: () => number,
    late?: string,
  ): Promise<WebhookExam['cases'][number]> {
    const free = await this.#shares.take(keyId, destination.id);
    try {
      const left = Math.floor(timeLeft());
      const { id, expected } = examCase;
      if (left <= 0) return { id, expected, got: late!, passed: false, ms: 0 };
      const { body, headers } = examCase.build(sitting, Math.floor(this.#clock() / 1000));
      const sent = await this.#sender.post(destination.url, body, headers, undefined, left);
      const judgement = judged(expected, sent);
      const timedOut = late !== undefined && sent.status === undefined && sent.error?.startsWith('no answer within');
      return { id, expected, ...judgement, ...(timedOut ? { got: late } : {}), ms: Math.min(sent.ms, MAX_MS) };
    } finally {
      free();
    }
  }

  close(): void {
    this.#sender.close();
  }
}

/**
 * What the cases are made from: `webhook.test` events in memory,
 * in the key's time, shaped as the endpoint's deliveries are.
 */
function sittingOf(destination: Destination, keyNowMs: number): Sitting {
  const written = (): Written => {
    const event: StoredEvent = {
      // Sequence 0: no stored event has it (and the nonce, no other exam).
      id: eventIdOf(0, newNonce()),
      type: 'webhook.test',
      timestamp: new Date(keyNowMs).toISOString(),
      livemode: destination.livemode,
      data: { endpointId: destination.id },
    };
    return { id: event.id, body: deliveryBody(event, destination.apiVersion) };
  };
  return { first: written(), another: written, secrets: destination.secrets };
}

/**
 * `POST /webhook-endpoints/{endpointId}/exam` (examWebhookEndpoint):
 * how a test key's receiver answers what a delivery may be.
 */
export const examWebhookEndpoint = (app: App, { webhooks, cards }: { webhooks: WebhookDeps; cards: Cards }): void => {
  const { endpoints, clock } = webhooks;
  const examiner = new Examiner(webhooks);
  app.addHook('onClose', async () => examiner.close());

  app.post(
    '/webhook-endpoints/:endpointId/exam',
    {
      schema: {
        operationId: 'examWebhookEndpoint',
        summary: 'Examine the receiver of one of your test key’s webhook endpoints',
        description: DESCRIPTION,
        tags: [TAG.webhooks],
        'x-stability': 'experimental',
        params: EndpointParams,
        response: {
          200: { ...ref(WebhookExam), description: 'The exam, every case judged.' },
          ...problemResponses(400, 403, 404),
        },
      },
    },
    async (request) => {
      const key = keyOf(request);
      if (!key.test)
        throw new ProblemError(
          'test-key-required',
          'Only a test key’s endpoint can be examined: an exam is practice, and a live key’s receivers get only ' +
            'real deliveries.',
        );
      const { endpointId } = request.params;
      // The events are in the key's time, as its others (test-mode/); their
      // `webhook-timestamp`s in the real time, so that signatures verify.
      const keyNowMs = callerNow(request.identity.clock, clock());
      const destination =
        (await endpoints.find(key.id, endpointId)) && (await endpoints.destination(endpointId, clock()));
      if (!destination) throw endpointNotFound(endpointId);
      const cases = await lifted(request.raw.socket, 2 * examiner.limitMs, () =>
        examiner.run(key.id, destination, sittingOf(destination, keyNowMs)),
      );
      const wrong = cases.filter((c) => !c.passed).map((c) => c.id);
      await cards.record(key.id, cardStart(key), { kind: 'examined', at: keyNowMs, requestId: request.id, wrong });
      return { passed: wrong.length === 0, cases };
    },
  );
};

/**
 * Runs `work` with the connection's idle timeout lifted by `ms`: the exam's client waits, with nothing
 * moving on its connection, for as long as its cases may take, longer than a handler usually may.
 */
async function lifted<T>(
  socket: { timeout?: number; setTimeout?: (ms: number) => unknown } | null,
  ms: number,
  work: () => Promise<T>,
): Promise<T> {
  const before = socket?.timeout;
  // An injected request's socket has no timeout to lift.
  if (!socket?.setTimeout || !before) return work();
  socket.setTimeout(before + ms);
  try {
    return await work();
  } finally {
    if (!(socket as { destroyed?: boolean }).destroyed) socket.setTimeout(before);
  }
}
