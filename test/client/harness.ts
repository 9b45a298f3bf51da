import type { ClientCredentials, Fetch, PetstoreClientOptions } from '../../client/index.js';
import type { App } from '../../src/http/types.js';
import type { FakeClock } from '../helpers/clock.js';

export const BASE_URL = 'http://petstore.test';

/** A `fetch` that hands the Request to `app.inject`: the real server, no network. */
export function injectFetch(app: App): Fetch {
  return async (request) => {
    const url = new URL(request.url);
    const body = request.body === null ? undefined : await request.text();
    const answer = await app.inject({
      method: request.method as 'GET',
      url: url.pathname + url.search,
      headers: Object.fromEntries(request.headers),
      payload: body,
    });
    const headers = new Headers();
    for (const [name, value] of Object.entries(answer.headers)) {
      for (const one of [value ?? []].flat()) headers.append(name, String(one));
    }
    return new Response(answer.payload === '' ? null : answer.payload, { status: answer.statusCode, headers });
  };
}

/** One clock for server and client: the client's sleep moves it, so nothing waits for real. */
export function sharedClock(clock: FakeClock): Pick<PetstoreClientOptions, 'now' | 'sleep'> {
  return {
    now: clock,
    sleep: async (ms) => clock.advance(ms),
  };
}

/**
 * The options of a client of the test app, with deprecation notices kept instead of printed: of a key, or of a key's
 * client credentials (its requests then carry access tokens).
 */
export function clientOptions(app: App, clock: FakeClock, auth: string | ClientCredentials): PetstoreClientOptions {
  const credentials = typeof auth === 'string' ? { apiKey: auth } : auth;
  return { ...credentials, baseUrl: BASE_URL, fetch: injectFetch(app), ...sharedClock(clock), onDeprecation: () => {} };
}

/** The real time, where a helper takes a `FakeClock`: a service whose test keys' clocks are all a test moves. */
export const realTime: FakeClock = Object.assign(() => Date.now(), {
  advance: () => {
    throw new Error('the real time is not moved: move a test key’s clock instead');
  },
  set: () => {
    throw new Error('the real time is not set: move a test key’s clock instead');
  },
});

/**
 * A test key's own time for a client (its `now` and `sleep` options), against a service on the real
 * time: a wait of `realBelowMs` or more passes by moving the key's clock (`POST /test-clock/advance`
 * `{to}`) instead of waiting, shorter ones are slept. An advance is as if the time had passed: the
 * key's windows, its `Retry-After`s and its report card count it as time waited. For a running clock,
 * as a new key's is; `advanceTo` moves it as a test step.
 */
export function keyTime(baseUrl: string, apiKey: string, { realBelowMs = 50 } = {}) {
  let offsetMs = 0;
  const now = () => Date.now() + offsetMs;
  const headers = { 'x-api-key': apiKey, 'content-type': 'application/json' };
  const clock = async (answer: Response) => {
    if (!answer.ok) throw new Error(`the test clock answered ${answer.status}: ${await answer.text()}`);
    offsetMs = ((await answer.json()) as { offsetSeconds: number }).offsetSeconds * 1000;
  };
  const advanceTo = async (to: string) => {
    const answer = await fetch(`${baseUrl}/test-clock/advance`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ to }),
    });
    if (answer.status !== 409) return clock(answer);
    // Another wait moved it further meanwhile: this one has passed too.
    await answer.body?.cancel();
    await clock(await fetch(`${baseUrl}/test-clock`, { headers }));
  };
  const sleep = async (ms: number) => {
    if (ms < realBelowMs) return new Promise<void>((resolve) => setTimeout(resolve, Math.max(0, ms)));
    await advanceTo(new Date(now() + ms).toISOString());
  };
  return { now, sleep, advanceTo };
}
