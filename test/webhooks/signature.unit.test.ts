import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { newSecret, secretHint, sign, signatures, verify } from '../../src/webhooks/signature.js';

/** Standard Webhooks signatures, held against the specification's reference library (`standardwebhooks`). */
const id = 'evt_2rk1f3a9b07c44d';
const timestamp = 1_795_749_555;
const body = '{"id":"evt_2rk1f3a9b07c44d","type":"order.placed"}';

describe('webhook signatures (src/webhooks/signature.ts)', () => {
  it('makes whsec_ secrets of 32 random bytes, each one different', () => {
    const secrets = Array.from({ length: 50 }, newSecret);
    for (const secret of secrets) {
      expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
      expect(Buffer.from(secret.slice('whsec_'.length), 'base64')).toHaveLength(32);
    }
    expect(new Set(secrets).size).toBe(50);
  });

  it('signs exactly as the reference library does, and the library verifies every signature', () => {
    const secret = newSecret();
    const reference = new Webhook(secret);
    expect(sign(secret, id, timestamp, body)).toBe(reference.sign(id, new Date(timestamp * 1000), body));
    const now = Math.floor(Date.now() / 1000);
    const headers = {
      'webhook-id': id,
      'webhook-timestamp': String(now),
      'webhook-signature': sign(secret, id, now, body),
    };
    expect(reference.verify(body, headers)).toEqual(JSON.parse(body));
  });

  it('carries one signature per secret in force, and the library accepts the delivery with either secret', () => {
    const [old, fresh] = [newSecret(), newSecret()];
    const now = Math.floor(Date.now() / 1000);
    const header = signatures([fresh, old], id, now, body);
    expect(header.split(' ')).toEqual([sign(fresh, id, now, body), sign(old, id, now, body)]);
    for (const secret of [old, fresh]) {
      expect(
        new Webhook(secret).verify(body, {
          'webhook-id': id,
          'webhook-timestamp': String(now),
          'webhook-signature': header,
        }),
      ).toBeTruthy();
    }
  });

  it('verifies a signature by any secret in force, and refuses another body, id, time or secret', () => {
    const [secret, other] = [newSecret(), newSecret()];
    const header = signatures([secret], id, timestamp, body);
    expect(verify([other, secret], id, timestamp, body, header)).toBe(true);
    expect(verify([secret], id, timestamp, `${body} `, header)).toBe(false);
    expect(verify([secret], 'evt_other', timestamp, body, header)).toBe(false);
    expect(verify([secret], id, timestamp + 1, body, header)).toBe(false);
    expect(verify([other], id, timestamp, body, header)).toBe(false);
    expect(verify([secret], id, timestamp, body, '')).toBe(false);
    expect(verify([secret], id, timestamp, body, 'v1,not-a-signature')).toBe(false);
  });

  it('shows a hint that tells secrets apart but holds too little to sign with', () => {
    const secret = newSecret();
    expect(secretHint(secret)).toBe(`${secret.slice(0, 10)}…`);
    expect(secretHint(secret).length).toBeLessThan(16);
  });
});
