import { hash, randomBytes } from 'node:crypto';

/**
 * An API key is `pet_` followed by 32 base64url characters: 192 bits of randomness. The store keeps
 * only its SHA-256 and a short display prefix; the key itself is shown once, at creation.
 */
const KEY_PATTERN = /^pet_[A-Za-z0-9_-]{32}$/;

export function generateKey(): string {
  return `pet_${randomBytes(24).toString('base64url')}`;
}

export function isWellFormedKey(value: string): boolean {
  return KEY_PATTERN.test(value);
}

export function hashKey(key: string): string {
  return hash('sha256', key, 'hex');
}

/** Enough to tell keys apart in a listing, far too little to guess the rest. */
export function displayPrefix(key: string): string {
  return `${key.slice(0, 8)}…`;
}

/** The public id of a key: what the admin API, the CLI, metrics and rate-limit state use. */
export function generateKeyId(): string {
  return `key_${randomBytes(8).toString('hex')}`;
}
