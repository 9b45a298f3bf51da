/**
 * Verifying a webhook delivery as the Standard Webhooks specification says (standardwebhooks.com), with
 * nothing but the platform's Web Crypto: the same deliveries the specification's reference library
 * accepts, and no other (test/client/webhooks.test.ts holds the two together).
 */
import type { Event } from './petstore-client.js';

/** How far a delivery's `webhook-timestamp` may be from the receiver's clock, as the reference libraries allow. */
export const TOLERANCE_SECONDS = 5 * 60;

export class WebhookVerificationError extends Error {
  override name = 'WebhookVerificationError';
}

export interface VerifyOptions {
  /** Seconds since the epoch; default: now. */
  now?: number;
  toleranceSeconds?: number;
}

type Headers = Record<string, string | string[] | undefined> | { get(name: string): string | null };

/**
 * The event a delivery carries, once its signature is one of `secrets` (`whsec_…`: during a rotation,
 * pass both) and its timestamp is recent. `body` must be the raw body as received: parsed and written
 * again it would not be the bytes that were signed. Throws `WebhookVerificationError` otherwise.
 */
export async function verifyWebhook(
  body: string,
  headers: Headers,
  secrets: string | readonly string[],
  options: VerifyOptions = {},
): Promise<Event> {
  const header = (name: string) => {
    const value =
      'get' in headers && typeof headers.get === 'function'
        ? headers.get(name)
        : (headers as Record<string, string | string[] | undefined>)[name];
    return Array.isArray(value) ? value[0] : (value ?? undefined);
  };
  const id = header('webhook-id');
  const timestamp = header('webhook-timestamp');
  const signature = header('webhook-signature');
  if (!id || !timestamp || !signature) throw new WebhookVerificationError('Missing required headers');
  const seconds = Number(timestamp);
  if (!/^\d+$/.test(timestamp)) throw new WebhookVerificationError('Invalid Signature Headers');
  const now = options.now ?? Math.floor(Date.now() / 1000);
  const tolerance = options.toleranceSeconds ?? TOLERANCE_SECONDS;
  if (now - seconds > tolerance) throw new WebhookVerificationError('Message timestamp too old');
  if (seconds > now + tolerance) throw new WebhookVerificationError('Message timestamp too new');
  const signed = new TextEncoder().encode(`${id}.${timestamp}.${body}`);
  const sent = signature.split(' ').flatMap((entry) => (entry.startsWith('v1,') ? [entry.slice(3)] : []));
  for (const secret of typeof secrets === 'string' ? [secrets] : secrets) {
    const expected = await hmac(secret, signed);
    if (sent.some((one) => equal(one, expected))) return JSON.parse(body) as Event;
  }
  throw new WebhookVerificationError('No matching signature found');
}

async function hmac(secret: string, data: BufferSource): Promise<string> {
  const bytes = Uint8Array.from(atob(secret.startsWith('whsec_') ? secret.slice(6) : secret), (c) => c.charCodeAt(0));
  const key = await crypto.subtle.importKey('raw', bytes, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  const mac = new Uint8Array(await crypto.subtle.sign('HMAC', key, data));
  return btoa(String.fromCharCode(...mac));
}

/** Compares in a time that does not depend on where the two differ. */
function equal(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let differ = 0;
  for (let i = 0; i < a.length; i++) differ |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return differ === 0;
}
