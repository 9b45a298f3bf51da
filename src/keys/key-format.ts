import { hash, randomBytes } from 'node:crypto';

/**
 * An API key is `pet_` followed by 32 base64url characters: 192 bits of randomness. A test key (see
 * faults/) is `pet_test_` followed by the same: its form says what it is, as Stripe's `sk_test_` does.
 * The store keeps only a key's SHA-256 and a short display prefix; the key itself is shown once, at
 * creation.
 */
const LIVE = 'pet_';
const TEST = 'pet_test_';
const KEY_PATTERN = /^pet_(?:test_)?[A-Za-z0-9_-]{32}$/;
const RANDOM_LENGTH = 32;

export function generateKey(test = false): string {
  return `${test ? TEST : LIVE}${randomBytes(24).toString('base64url')}`;
}

/** A test key made from `material` (a digest of at least 24 bytes): the same material, the same key. */
export function testKeyFrom(material: Buffer): string {
  return `${TEST}${material.subarray(0, 24).toString('base64url')}`;
}

export function isWellFormedKey(value: string): boolean {
  return KEY_PATTERN.test(value);
}

/** Whether a key is of the test form. */
function isTestKeyForm(key: string): boolean {
  return key.length === TEST.length + RANDOM_LENGTH && key.startsWith(TEST);
}

export function hashKey(key: string): string {
  return hash('sha256', key, 'hex');
}

/** Enough to tell keys apart in a listing (four random characters), far too little to guess the rest. */
export function displayPrefix(key: string): string {
  return `${key.slice(0, (isTestKeyForm(key) ? TEST : LIVE).length + 4)}…`;
}

/** The public id of a key: what the admin API, the CLI, metrics and rate-limit state use. */
export function generateKeyId(): string {
  return `key_${randomBytes(8).toString('hex')}`;
}
