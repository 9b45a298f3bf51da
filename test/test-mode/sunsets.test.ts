import { afterEach, describe, expect, it } from 'vitest';
import { NEWEST_VERSION, OLDEST_VERSION } from '../../src/versions/versions.js';
import { type TestApp, testApp } from '../helpers/app.js';
import { expectProblem } from '../helpers/orders.js';

/**
 * The sunsets of a deprecated operation (docs/calling-the-api.md#a-deprecated-operation) and of a version
 * (docs/versions.md#using-versions) in a test key's own time (docs/testing-clients.md#testing-your-client-in-seconds):
 * past them, that key gets the 410s; no other key does.
 */

const PETS_SUNSET = '2027-03-01T00:00:00.000Z';
const VERSION_SUNSET = '2027-07-01T00:00:00.000Z';
let t: TestApp;
afterEach(async () => t.close());

async function started(petsSunset = PETS_SUNSET, versionSunset = VERSION_SUNSET) {
  t = await testApp({
    env: {
      PETS_GET_DEPRECATED_AT: '2026-01-01T00:00:00Z',
      PETS_GET_SUNSET_AT: petsSunset,
      OLDEST_VERSION_SUNSET_AT: versionSunset,
    },
  });
}
const as = (key: string, extra: Record<string, string> = {}) => ({ 'x-api-key': key, ...extra });
const advanceTo = (key: string, to: string) =>
  t.request({ method: 'POST', url: '/test-clock/advance', headers: as(key), payload: { to } });

describe("sunsets in a test key's time", () => {
  it('GET /pets/{petId} answers 410 sunset to a key whose clock passed its sunset, and 200 to every other key', async () => {
    await started();
    const [moved, still, live] = [
      await t.newKey({ plan: 'pro', test: true }),
      await t.newKey({ plan: 'pro', test: true }),
      await t.newKey('pro'),
    ];
    expect((await advanceTo(moved, new Date(Date.parse(PETS_SUNSET) - 1).toISOString())).statusCode).toBe(200);
    expect((await t.request({ url: '/pets/1', headers: as(moved) })).statusCode).toBe(200);
    await t.request({ method: 'POST', url: '/test-clock/advance', headers: as(moved), payload: { seconds: 1 } });
    expectProblem(await t.request({ url: '/pets/1', headers: as(moved) }), 410, 'sunset');
    for (const key of [still, live])
      expect((await t.request({ url: '/pets/1', headers: as(key) })).statusCode).toBe(200);
  });

  it("the oldest version answers 410 version-sunset to a key pinned to it once its clock passed the sunset; the newest still answers, and so does the key's clock", async () => {
    await started();
    const pinned = await t.newKey({ plan: 'pro', test: true, apiVersion: OLDEST_VERSION });
    const other = await t.newKey({ plan: 'pro', test: true, apiVersion: OLDEST_VERSION });
    expect((await t.request({ url: '/usage', headers: as(pinned) })).statusCode).toBe(200);
    await advanceTo(pinned, VERSION_SUNSET);
    expectProblem(await t.request({ url: '/store/orders', headers: as(pinned) }), 410, 'version-sunset');
    expect(
      (await t.request({ url: '/store/orders', headers: as(pinned, { 'petstore-version': NEWEST_VERSION }) }))
        .statusCode,
    ).toBe(200);
    expect((await t.request({ url: '/test-clock', headers: as(pinned) })).statusCode).toBe(200);
    expect((await t.request({ method: 'POST', url: '/test-clock/freeze', headers: as(pinned) })).statusCode).toBe(200);
    expect((await t.request({ url: '/store/orders', headers: as(other) })).statusCode).toBe(200);
  });

  it('past both sunsets of GET /pets/{petId}, the earlier one answers; on a tie, the version’s', async () => {
    await started();
    const pinned = await t.newKey({ plan: 'pro', test: true, apiVersion: OLDEST_VERSION });
    await advanceTo(pinned, VERSION_SUNSET);
    expectProblem(await t.request({ url: '/pets/1', headers: as(pinned) }), 410, 'sunset');
    await t.close();
    await started(VERSION_SUNSET, PETS_SUNSET);
    const early = await t.newKey({ plan: 'pro', test: true, apiVersion: OLDEST_VERSION });
    await advanceTo(early, VERSION_SUNSET);
    expectProblem(await t.request({ url: '/pets/1', headers: as(early) }), 410, 'version-sunset');
    await t.close();
    await started(VERSION_SUNSET, VERSION_SUNSET);
    const tie = await t.newKey({ plan: 'pro', test: true, apiVersion: OLDEST_VERSION });
    await advanceTo(tie, VERSION_SUNSET);
    expectProblem(await t.request({ url: '/pets/1', headers: as(tie) }), 410, 'version-sunset');
  });
});
