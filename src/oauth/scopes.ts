/**
 * What an access token may do (docs/tokens.md#scopes): each API operation needs one scope, or none (`/usage`, the
 * test-mode operations take any token of the key). A token asks for some of them, all by default.
 */
export const SCOPES = {
  'pets:read': 'Read the pet catalogue.',
  'orders:read': "Read the key's orders and events.",
  'orders:write': 'Place, cancel and advance orders.',
  'webhooks:write': 'Create, read, change, test and examine webhook endpoints.',
} as const;

export type Scope = keyof typeof SCOPES;

export const SCOPE_NAMES = Object.keys(SCOPES) as Scope[];

const isScope = (name: string): name is Scope => Object.hasOwn(SCOPES, name);

/**
 * The scopes a token request asks for (RFC 6749 §3.3: space-separated, in any order; absent, all of them), or the
 * first name that is none.
 */
export function scopesAsked(scope: string | undefined): { scopes: Scope[] } | { unknown: string } {
  if (scope === undefined) return { scopes: SCOPE_NAMES };
  const asked = new Set<Scope>();
  for (const name of scope.split(' ')) {
    if (name === '') continue;
    if (!isScope(name)) return { unknown: name };
    asked.add(name);
  }
  // In the order the scopes are listed, so that equal requests make equal tokens' `scope`.
  return asked.size === 0 ? { unknown: '' } : { scopes: SCOPE_NAMES.filter((name) => asked.has(name)) };
}
