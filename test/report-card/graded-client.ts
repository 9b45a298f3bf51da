import { expect } from 'vitest';
import { NEWEST_VERSION } from '../../src/versions/versions.js';
import { json, type TestApp } from '../helpers/app.js';

/**
 * A client of a test key whose every request the card grades, for the
 * tests of each check (docs/testing-clients.md#is-my-client-a-good-api-citizen).
 */

export interface Check {
  id: string;
  status: 'passed' | 'failed' | 'untested';
  seen: number;
  failed: number;
  failures: { requestId: string; at: string; detail: string }[];
}

/** A test key (free unless told) and what its client sends: pinned to the newest version unless told otherwise. */
export async function client(t: TestApp, plan: 'free' | 'pro' = 'free', apiVersion?: string) {
  const key = await t.newKey({ plan, test: true, ...(apiVersion ? { apiVersion } : {}) });
  let n = 0;
  const send = async (
    url: string,
    {
      method = 'GET',
      headers = {},
      payload,
      pinned = true,
    }: { method?: string; headers?: Record<string, string>; payload?: object; pinned?: boolean } = {},
  ) => {
    const id = `req-${++n}`;
    const sent = {
      'x-api-key': key,
      'x-request-id': id,
      ...(pinned ? { 'petstore-version': NEWEST_VERSION } : {}),
      ...headers,
    };
    const response = await t.request({ method: method as 'GET', url, headers: sent, ...(payload ? { payload } : {}) });
    return Object.assign(response, { id });
  };
  const card = async () =>
    json<{ requests: number; checks: Check[] }>(
      await t.request({ url: '/report-card', headers: { 'x-api-key': key } }),
    );
  const check = async (id: string) => (await card()).checks.find((c) => c.id === id)!;
  const advance = async (seconds: number) =>
    expect(
      (
        await t.request({
          method: 'POST',
          url: '/test-clock/advance',
          headers: { 'x-api-key': key },
          payload: { seconds },
        })
      ).statusCode,
    ).toBe(200);
  return { key, send, card, check, advance };
}

/** Asserts the check passed, having seen its situation. */
export function passed(check: Check): void {
  expect(check).toMatchObject({ status: 'passed', failed: 0, failures: [] });
  expect(check.seen).toBeGreaterThan(0);
}

/** Asserts the check failed at the request `requestId`, its detail matching `detail`. */
export function failedAt(check: Check, requestId: string, detail: RegExp): void {
  expect(check.status).toBe('failed');
  expect(check.failures[0]).toMatchObject({ requestId, at: expect.any(String) });
  expect(check.failures[0]!.detail).toMatch(detail);
}
