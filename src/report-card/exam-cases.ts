import { deliveryHeaders } from '../webhooks/dispatcher.js';
import type { Sent } from '../webhooks/sender.js';
import { newSecret, sign } from '../webhooks/signature.js';

/**
 * The cases of the receiver exam (docs/testing-clients.md#is-my-client-a-good-api-citizen; ./exam.ts sends them): what
 * each sends and the status class a receiver written to the Standard Webhooks specification answers it.
 */

/** How long a case waits for its answer (from the start of connecting), unless the sender's own timeout is shorter. */
export const EXAM_CASE_LIMIT_MS = 5_000;
/** How far from now the `stale` and `future` cases' timestamps are: twice what the reference libraries tolerate. */
const SKEW_S = 10 * 60;

/** An event as a delivery carries it: its id (`webhook-id`) and its body. */
export interface Written {
  id: string;
  body: string;
}

/** One request of the exam. */
export interface Letter {
  body: string;
  headers: Record<string, string>;
}

/** What a case is made from: the exam's first event, a new one (an id of its own), and the secrets in force. */
export interface Sitting {
  first: Written;
  another(): Written;
  secrets: readonly string[];
}

export interface ExamCase {
  id: string;
  expected: '2xx' | '4xx';
  /** What the case sends, for the operation's description. */
  sends: string;
  /** Its request at `now` (Unix seconds: the `webhook-timestamp` of a delivery made now). */
  build(sitting: Sitting, now: number): Letter;
}

const signed = ({ id, body }: Written, secrets: readonly string[], timestamp: number): Letter => ({
  body,
  headers: deliveryHeaders(secrets, id, timestamp, body),
});

/**
 * The exam, in the order it is sent. Every case but `duplicate`
 * carries an event of its own, so that each is judged alone.
 */
export const EXAM_CASES = [
  {
    id: 'valid',
    expected: '2xx',
    sends: 'a delivery as every one is',
    build: (s, now) => signed(s.first, s.secrets, now),
  },
  {
    id: 'duplicate',
    expected: '2xx',
    sends:
      'the same delivery again, with the same `webhook-id`, signed anew as a retry is; a duplicate is ' +
      'acknowledged, not an error',
    build: (s, now) => signed(s.first, s.secrets, now),
  },
  {
    id: 'wrong-secret',
    expected: '4xx',
    sends: 'signed with another secret than the endpoint’s',
    build: (s, now) => signed(s.another(), [newSecret()], now),
  },
  {
    id: 'unsigned',
    expected: '4xx',
    sends: 'no `webhook-signature` header',
    build: (s, now) => {
      const { body, headers } = signed(s.another(), s.secrets, now);
      delete headers['webhook-signature'];
      return { body, headers };
    },
  },
  {
    id: 'stale',
    expected: '4xx',
    sends: 'a `webhook-timestamp` 10 minutes old, correctly signed',
    build: (s, now) => signed(s.another(), s.secrets, now - SKEW_S),
  },
  {
    id: 'future',
    expected: '4xx',
    sends: 'a `webhook-timestamp` 10 minutes ahead, correctly signed',
    build: (s, now) => signed(s.another(), s.secrets, now + SKEW_S),
  },
  {
    id: 'tampered',
    expected: '4xx',
    sends:
      'the body changed after signing: the same event with other whitespace, which a receiver that checks the ' +
      'bytes it received refuses (one that verifies a re-serialisation of what it parsed accepts it)',
    build: (s, now) => {
      const letter = signed(s.another(), s.secrets, now);
      return { ...letter, body: JSON.stringify(JSON.parse(letter.body), null, 2) };
    },
  },
  {
    id: 'second-signature',
    expected: '2xx',
    sends:
      'two signatures, the first by a secret the endpoint does not have, then the valid one, as during a rotation; ' +
      'one that matches is enough',
    build: (s, now) => {
      const written = s.another();
      const letter = signed(written, s.secrets, now);
      const unknown = sign(newSecret(), written.id, now, written.body);
      return {
        ...letter,
        headers: { ...letter.headers, 'webhook-signature': `${unknown} ${letter.headers['webhook-signature']}` },
      };
    },
  },
] as const satisfies readonly ExamCase[];

export type ExamCaseId = (typeof EXAM_CASES)[number]['id'];

/** Plain words for the errors a learner's receiver most often meets; the sender's own text for the rest. */
const PLAIN: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  ENOTFOUND: 'the host name does not resolve',
};

export function judged(expected: ExamCase['expected'], sent: Sent): { got: string; passed: boolean } {
  if (sent.status === undefined) {
    const error = sent.error ?? 'no answer';
    return { got: PLAIN[error.split(':')[0]!] ?? error, passed: false };
  }
  const low = expected === '2xx' ? 200 : 400;
  return { got: String(sent.status), passed: sent.status >= low && sent.status < low + 100 };
}
