import { backOffFault } from './backs-off.js';
import { type Answer, type Arrival, type Card, type Fail, KEEP, keep, sameBody, seconds } from './card.js';
import { RECENT_MS, REPEATS } from './checks.js';

/** An answer a client cannot trust to say what was done: neither `2xx` nor `4xx`, or none at all. */
const failedWithoutAnswer = (status: Answer['status']) =>
  typeof status !== 'number' || !((status >= 200 && status < 300) || (status >= 400 && status < 500));
/** What `backs-off` watches repeats after. */
const retriable = (status: Answer['status']) => status === 500 || status === 'reset';
/** An answer, in words. */
const said = (status: Answer['status']) =>
  status === 'reset' ? 'a reset connection' : status === 'cut' ? 'a connection cut before the answer' : `a ${status}`;

/** `backs-off` and `idempotent-retries`: a request repeated after it failed. */
export function judgeRepeats(card: Card, request: Arrival, answer: Answer, fail: Fail): void {
  const same = <T extends { target: string; body: string | null; sentReal: number }>(entry: T) =>
    entry.target === request.target && sameBody(entry.body, request.body) && request.real >= entry.sentReal;

  const chain = card.chains.findIndex(same);
  if (chain !== -1) {
    const entry = card.chains[chain]!;
    entry.waits.push(request.key - entry.sentKey);
    if (entry.waits.length === REPEATS) {
      card.tallies['backs-off'].seen++;
      const fault = backOffFault(entry.waits);
      if (fault)
        fail('backs-off', `repeated ${request.method} ${request.path} ${REPEATS} times after a failure ${fault}`);
    }
    if (entry.waits.length < REPEATS && retriable(answer.status))
      Object.assign(entry, { sentKey: answer.key, sentReal: answer.real });
    else card.chains.splice(chain, 1);
  } else if (retriable(answer.status)) {
    keep(
      card.chains,
      { target: request.target, body: request.body, sentKey: answer.key, sentReal: answer.real, waits: [] },
      KEEP.chains,
    );
  }

  if (request.method !== 'POST') return;
  const post = card.posts.findIndex((entry) => same(entry) && request.key - entry.sentKey <= RECENT_MS);
  if (post !== -1) {
    const entry = card.posts[post]!;
    card.tallies['idempotent-retries'].seen++;
    const after = `${seconds(request.key - entry.sentKey)} after ${entry.status}`;
    if (request.idempotencyKey === null)
      fail('idempotent-retries', `repeated POST ${request.path} without an Idempotency-Key ${after}`);
    else if (entry.idempotencyKey !== request.idempotencyKey)
      fail(
        'idempotent-retries',
        `repeated POST ${request.path} ${after} with ${entry.idempotencyKey === null ? 'an Idempotency-Key its first try did not carry' : 'another Idempotency-Key than its first try'}`,
      );
    if (failedWithoutAnswer(answer.status))
      Object.assign(entry, { sentKey: answer.key, sentReal: answer.real, status: said(answer.status) });
    else card.posts.splice(post, 1);
  } else if (failedWithoutAnswer(answer.status)) {
    const entry = {
      target: request.target,
      body: request.body,
      idempotencyKey: request.idempotencyKey,
      sentKey: answer.key,
      sentReal: answer.real,
      status: said(answer.status),
    };
    keep(card.posts, entry, KEEP.posts);
  }
}
