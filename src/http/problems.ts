import { PROBLEM_TYPES, type ProblemSlug } from './problem-types.js';

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

/** One invalid input of a `400`. */
export interface InputError {
  in: 'path' | 'query' | 'header' | 'body';
  name: string;
  message: string;
}

/** Thrown anywhere a request must end in a problem response; the error handler renders it. */
export class ProblemError extends Error {
  constructor(
    readonly slug: ProblemSlug,
    readonly detail: string,
    readonly extras: Record<string, unknown> = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(detail);
  }

  get status(): number {
    return PROBLEM_TYPES[this.slug].status;
  }
}

export function problemTypeUrl(publicUrl: string, slug: ProblemSlug): string {
  return `${publicUrl}/problems/${slug}`;
}

export function problemBody(
  publicUrl: string,
  slug: ProblemSlug,
  detail: string,
  instance: string,
  extras: Record<string, unknown> = {},
) {
  const { status, title } = PROBLEM_TYPES[slug];
  return { type: problemTypeUrl(publicUrl, slug), code: slug, title, status, detail, instance, ...extras };
}
