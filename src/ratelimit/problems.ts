import Type from 'typebox';
import type { ProblemMembers } from '../http/problem-schemas.js';
import { RetryAfterSeconds, StringEnum } from '../http/schemas.js';
import { MAX_LIMIT, PLAN_NAMES } from './plans.js';

/** What a `rate-limited` problem says beyond the common members: the window, the limit and the plan that refused. */
export const RATE_LIMIT_PROBLEM_MEMBERS: ProblemMembers = {
  'rate-limited': {
    window: StringEnum(['minute', 'day'], { description: 'The window that refused the request.' }),
    limit: Type.Integer({ format: 'int32', minimum: 1, maximum: MAX_LIMIT }),
    plan: StringEnum([...PLAN_NAMES, 'anonymous'], {
      description: "The key's plan; `anonymous` for a request without a valid key (counted per client address).",
    }),
    retryAfter: RetryAfterSeconds('Seconds, the same as the `Retry-After` header.'),
  },
  'uncounted-throttled': {
    policy: Type.Literal('uncounted', { description: 'The policy that refused: the throttle of the uncounted paths.' }),
    window: StringEnum(['minute', 'day'], { description: 'The window of the policy that refused the request.' }),
    limit: Type.Integer({ format: 'int32', minimum: 1, maximum: MAX_LIMIT }),
    retryAfter: RetryAfterSeconds('Seconds, the same as the `Retry-After` header.'),
  },
};
