import type { Fetch, PetstoreClientOptions } from '../../client/index.js';
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

/** The options of a client of the test app, with deprecation notices kept instead of printed. */
export function clientOptions(app: App, clock: FakeClock, apiKey: string): PetstoreClientOptions {
  return { apiKey, baseUrl: BASE_URL, fetch: injectFetch(app), ...sharedClock(clock), onDeprecation: () => {} };
}
