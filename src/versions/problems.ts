import Type from 'typebox';
import type { ProblemMembers } from '../http/problem-schemas.js';
import { VERSION_PATTERN } from './versions.js';

/** What an `unknown-version` problem says beyond the common members: every version there is. */
export const VERSION_PROBLEM_MEMBERS: ProblemMembers = {
  'unknown-version': {
    versions: Type.Array(Type.String({ pattern: VERSION_PATTERN, maxLength: 10 }), {
      maxItems: 100,
      description: 'Every version, oldest first.',
    }),
  },
};
