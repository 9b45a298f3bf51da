import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { describe, expect, it } from 'vitest';
import { internalError, storeUnavailable } from '../../src/http/errors.js';
import { problemRef, ROUTE_PROBLEM_SLUGS } from '../../src/http/problem-schemas.js';
import { NAMED_SCHEMAS } from '../../src/document-schemas.js';
import { ProblemError, problemBody } from '../../src/http/problems.js';
import { PROBLEM_SLUGS, PROBLEM_TYPES, type ProblemSlug } from '../../src/http/problem-types.js';

/** Problems (RFC 9457): one place says each type, and every body the service makes matches its type's schema. */
const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;
const ajv = addFormats(new Ajv({ allErrors: true, strict: false }));
for (const schema of NAMED_SCHEMAS) ajv.addSchema(schema);
const validatorOf = (slug: ProblemSlug) => ajv.getSchema((problemRef(slug) as unknown as { $ref: string }).$ref)!;

/** The members a problem type adds, as the service fills them. */
const EXTRAS: Record<string, Record<string, unknown>> = {
  'invalid-request': { errors: [{ in: 'query', name: 'limit', message: 'must be <= 100' }] },
  'rate-limited': { window: 'minute', limit: 60, plan: 'free', retryAfter: 12 },
  'uncounted-throttled': { policy: 'uncounted', window: 'minute', limit: 600, retryAfter: 60 },
  'unknown-version': { versions: ['2025-06-01', '2026-11-26'] },
  'key-banned': { retryAfter: 60, bannedUntil: '2026-11-27T12:01:00.000Z' },
  'insufficient-scope': { scope: 'orders:write' },
};

describe('problem types (src/http/problem-types.ts)', () => {
  it('each has a client or server error status, a title, a description and a slug of lower-case words', () => {
    expect(PROBLEM_SLUGS.length).toBeGreaterThan(20);
    for (const slug of PROBLEM_SLUGS) {
      const { status, title, description } = PROBLEM_TYPES[slug];
      expect(slug).toMatch(/^[a-z]+(-[a-z]+)*$/);
      expect(status >= 400 && status <= 599, slug).toBe(true);
      expect(title.length, slug).toBeGreaterThan(3);
      expect(description.length, slug).toBeGreaterThan(20);
    }
  });

  it('a body names its type by an absolute URL ending in its slug, which is also its code, with the status and title of the type', () => {
    expect(problemBody('https://api.test', 'not-found', 'No pet 7.', '/pets/7')).toEqual({
      type: 'https://api.test/problems/not-found',
      code: 'not-found',
      title: 'Not found',
      status: 404,
      detail: 'No pet 7.',
      instance: '/pets/7',
    });
  });

  it("every body an operation may answer matches its type's schema in the document, and no other type's", () => {
    for (const slug of ROUTE_PROBLEM_SLUGS) {
      const body = problemBody('https://api.test', slug, 'What went wrong.', '/somewhere', EXTRAS[slug]);
      const own = validatorOf(slug);
      expect(own(body), `${slug}: ${JSON.stringify(own.errors)}`).toBe(true);
      for (const other of ROUTE_PROBLEM_SLUGS.filter(
        (s) => PROBLEM_TYPES[s].status === PROBLEM_TYPES[slug].status && s !== slug,
      )) {
        expect(validatorOf(other)(body), `${slug} as ${other}`).toBe(false);
      }
    }
  });

  it('a 503 for a store out of reach says when to retry; a 500 says nothing of what failed', () => {
    expect(storeUnavailable()).toMatchObject({
      slug: 'service-unavailable',
      status: 503,
      headers: { 'Retry-After': '5' },
    });
    const failure = internalError();
    expect(failure).toBeInstanceOf(ProblemError);
    expect([failure.status, failure.detail, failure.extras]).toEqual([
      500,
      'The service failed to handle the request.',
      {},
    ]);
  });
});
