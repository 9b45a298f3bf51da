import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, type TestApp, testApp } from '../helpers/app.js';

/**
 * Every `shipDate` the schema accepts is stored and given back as RFC 3339 in UTC, to the millisecond;
 * any other is refused with a `400` naming it. Nothing a client writes there answers `500` (a leap
 * second did, and years past 9999 came back as `+010000-…`).
 */

let t: TestApp;
let key: string;
beforeAll(async () => {
  t = await testApp();
  key = await t.newKey({ plan: 'enterprise', perMinute: 1_000_000, perDay: 1_000_000 });
});
afterAll(async () => t.close());

const STORED = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

async function place(shipDate: string) {
  const response = await t.app.inject({
    method: 'POST',
    url: '/store/orders',
    headers: { 'x-api-key': key },
    payload: { petId: 1, shipDate },
  });
  const body = json<{ shipDate?: string; errors?: Array<{ in: string; name: string }> }>(response);
  return { status: response.statusCode, body };
}

function expectRefused(answer: Awaited<ReturnType<typeof place>>) {
  expect(answer.status).toBe(400);
  expect(answer.body.errors).toEqual([expect.objectContaining({ in: 'body', name: '/shipDate' })]);
}

describe('shipDate', () => {
  it.each([
    ['2026-12-01T10:00:00Z', '2026-12-01T10:00:00.000Z'],
    ['2026-12-01t10:00:00.123456z', '2026-12-01T10:00:00.123Z'],
    ['2026-12-01 11:30:00+01:30', '2026-12-01T10:00:00.000Z'],
    ['0000-01-01T00:00:00Z', '0000-01-01T00:00:00.000Z'],
    ['0099-03-01T00:00:00Z', '0099-03-01T00:00:00.000Z'],
    ['2024-02-29T23:59:59.999-00:00', '2024-02-29T23:59:59.999Z'],
    ['9999-12-31T23:59:59+23:59', '9999-12-31T00:00:59.000Z'],
  ])('stores %s as %s', async (sent, stored) => {
    const answer = await place(sent);
    expect(answer.status).toBe(201);
    expect(answer.body.shipDate).toBe(stored);
  });

  it.each([
    ['a leap second', '2026-12-31T23:59:60Z'],
    ['a leap second given with an offset', '2027-01-01T00:59:60+01:00'],
    ['an instant after 9999 in UTC', '9999-12-31T23:59:59-23:59'],
    ['an instant before 0000 in UTC', '0000-01-01T00:00:00+00:01'],
    ['the 29th of February of a common year', '2023-02-29T00:00:00Z'],
    ['an offset without its colon', '2026-12-01T10:00:00+0100'],
    ['no offset', '2026-12-01T10:00:00'],
  ])('refuses %s with a 400 naming shipDate', async (_, sent) => {
    expectRefused(await place(sent));
  });

  it('stores any date-time of the RFC 3339 grammar as RFC 3339 in UTC, or refuses it naming shipDate; never a 5xx', async () => {
    const two = (n: number) => String(n).padStart(2, '0');
    // Any value of each field, or often one of its edges: the ends of the years, leap seconds, offsets.
    const field = (min: number, max: number, ...edges: number[]) =>
      fc.oneof(fc.integer({ min, max }), fc.constantFrom(...edges));
    const dateTime = fc.record({
      year: field(0, 9999, 0, 1, 99, 100, 1969, 1970, 2000, 2100, 9999),
      month: field(0, 13, 1, 2, 12),
      day: field(0, 32, 1, 28, 29, 31),
      hour: field(0, 24, 0, 23),
      minute: field(0, 60, 0, 59),
      second: field(0, 61, 59, 60),
      fraction: fc.option(fc.stringMatching(/^[0-9]{1,9}$/), { nil: undefined }),
      separator: fc.constantFrom('T', 't', ' '),
      offset: fc.oneof(
        fc.constantFrom('Z', 'z'),
        fc
          .record({ sign: fc.constantFrom('+', '-'), hours: field(0, 24, 0, 23), minutes: field(0, 60, 0, 59) })
          .map(({ sign, hours, minutes }) => `${sign}${two(hours)}:${two(minutes)}`),
      ),
    });
    await fc.assert(
      fc.asyncProperty(dateTime, async (d) => {
        const text = `${String(d.year).padStart(4, '0')}-${two(d.month)}-${two(d.day)}${d.separator}${two(d.hour)}:${two(d.minute)}:${two(d.second)}${d.fraction === undefined ? '' : `.${d.fraction}`}${d.offset}`;
        const answer = await place(text);
        expect([201, 400]).toContain(answer.status);
        if (answer.status === 400) {
          expectRefused(answer);
          return;
        }
        const stored = answer.body.shipDate!;
        expect(stored).toMatch(STORED);
        expect(d.second).toBeLessThan(60);
        // The same instant as V8 reads the text written plainly, where V8 reads it at all.
        const plain = Date.parse(text.replace(/[t ]/, 'T').replace(/z$/, 'Z'));
        if (d.year >= 1000 && !Number.isNaN(plain)) expect(Date.parse(stored)).toBe(Math.floor(plain));
      }),
      { numRuns: 300 },
    );
  });
});
