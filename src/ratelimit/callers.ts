/**
 * Who the limiter counts a request to, as the stores name it: written here and nowhere else, so that
 * the admin API finds a key's ban where the limit step put it.
 */

/** A valid key: its own caller, whatever address it comes from. */
export function keyCaller(keyId: string): string {
  return `key:${keyId}`;
}

/** A client address without a valid key (no key, a bad one, or one that could not be checked). */
export function addressCaller(address: string): string {
  return `ip:${address}`;
}

/** An address's throttle of the paths that count nothing (the index, the docs, the document, the problem pages). */
export function documentationCaller(address: string): string {
  return `documentation:ip:${address}`;
}
