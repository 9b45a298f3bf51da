import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Standard Webhooks signatures (standardwebhooks.com): a secret is `whsec_` and the base64 of its
 * bytes; a signature is `v1,` and the base64 HMAC-SHA256, keyed by those bytes, of
 * `<webhook-id>.<webhook-timestamp>.<body>`. A delivery carries one per secret in force, space-separated.
 */
const PREFIX = 'whsec_';

/** A new signing secret: 32 random bytes. */
export function newSecret(): string {
  return `${PREFIX}${randomBytes(32).toString('base64')}`;
}

/** What an endpoint shows of its secret after creation: enough to tell two apart, far too little to sign. */
export function secretHint(secret: string): string {
  return `${secret.slice(0, PREFIX.length + 4)}…`;
}

export function sign(secret: string, id: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.slice(PREFIX.length), 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}

/** The `webhook-signature` header: one signature per secret in force. */
export function signatures(secrets: readonly string[], id: string, timestamp: number, body: string): string {
  return secrets.map((secret) => sign(secret, id, timestamp, body)).join(' ');
}

/** Whether `header` holds a signature of `body` by one of `secrets` (the CLI's receiver checks with it). */
export function verify(
  secrets: readonly string[],
  id: string,
  timestamp: number,
  body: string,
  header: string,
): boolean {
  const sent = header.split(' ').map((s) => Buffer.from(s));
  return secrets.some((secret) => {
    const expected = Buffer.from(sign(secret, id, timestamp, body));
    return sent.some((one) => one.length === expected.length && timingSafeEqual(one, expected));
  });
}
