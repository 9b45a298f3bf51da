/** The client asks for the version its types describe, or the one it is told (docs/versions.md). */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_VERSION, PetstoreClient, UnknownVersionError } from '../../client/index.js';
import { NEWEST_VERSION, OLDEST_VERSION } from '../../src/versions/versions.js';
import { type TestApp, testApp } from '../helpers/app.js';
import { clientOptions } from './harness.js';

let t: TestApp;
let pinnedToOldest: string;

beforeAll(async () => {
  t = await testApp();
  pinnedToOldest = (await t.keys.create({ plan: 'business', apiVersion: OLDEST_VERSION })).key;
});
afterAll(async () => t.close());

describe('the client and versions', () => {
  it('sends the version its types describe, the newest, whatever its key is pinned to', async () => {
    expect(API_VERSION).toBe(NEWEST_VERSION);
    const versions: Array<string | null> = [];
    const options = clientOptions(t.app, t.clock, pinnedToOldest);
    const client = new PetstoreClient({
      ...options,
      fetch: async (request) => {
        versions.push(request.headers.get('petstore-version'));
        return options.fetch!(request);
      },
    });
    const pet = await client.getPet(1);
    expect(pet.photos).toEqual([{ url: 'https://example.com/photos/rex.jpg' }]);
    expect(versions).toEqual([NEWEST_VERSION]);
  });

  it('sends the version it is told, and an unknown one is an UnknownVersionError listing the versions', async () => {
    const old = new PetstoreClient({ ...clientOptions(t.app, t.clock, pinnedToOldest), version: OLDEST_VERSION });
    expect(await old.getPet(1)).toHaveProperty('photoUrls');
    const unknown = new PetstoreClient({
      ...clientOptions(t.app, t.clock, pinnedToOldest),
      version: '2020-01-01',
      maxAttempts: 1,
    });
    const error = await unknown.getPet(1).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnknownVersionError);
    expect((error as UnknownVersionError).versions).toEqual([OLDEST_VERSION, NEWEST_VERSION]);
  });
});
