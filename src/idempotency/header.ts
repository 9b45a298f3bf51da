import Type from 'typebox';
import { IDEMPOTENCY_WINDOW_IN_WORDS } from './window.js';

/** The header's name as documented (CORS lists it so); Node hands it over in lower case, as the schema names it. */
export const IDEMPOTENCY_KEY_HEADER_NAME = 'Idempotency-Key';
export const IDEMPOTENCY_KEY_HEADER = IDEMPOTENCY_KEY_HEADER_NAME.toLowerCase() as Lowercase<
  typeof IDEMPOTENCY_KEY_HEADER_NAME
>;
/** Set on the answer to a replayed request. */
export const IDEMPOTENT_REPLAYED_HEADER = 'Idempotent-Replayed';

/**
 * The request headers of every operation that honours `Idempotency-Key` (draft-ietf-httpapi-idempotency-key-header).
 */
export const IdempotencyHeaders = Type.Object({
  [IDEMPOTENCY_KEY_HEADER]: Type.Optional(
    Type.String({
      maxLength: 512,
      // A bare token of visible characters, or a Structured Field string (`"…"`, `\\` and `\"` escaped);
      // either way the key has 1 to 255 characters.
      pattern:
        '^(?:[\\x21\\x23-\\x7E][\\x21-\\x7E]{0,254}|"(?:[\\x20\\x21\\x23-\\x5B\\x5D-\\x7E]|\\\\[\\\\"]){1,255}")$',
      description:
        `Makes the request safe to retry: the same key and request within ${IDEMPOTENCY_WINDOW_IN_WORDS} get the ` +
        `original response; the same key with another request gets \`422\`; a retry while the original is still ` +
        `being processed gets \`409\`. A bare token (\`8e03…\`) or, as in ` +
        `draft-ietf-httpapi-idempotency-key-header, a Structured Field string (\`"8e03…"\`): the same key either ` +
        `way.`,
    }),
  ),
});

/** What a success of such an operation declares: `Idempotent-Replayed` on a replay. */
export const REPLAYED_RESPONSE_HEADER = {
  [IDEMPOTENT_REPLAYED_HEADER.toLowerCase()]: {
    type: 'string',
    const: 'true',
    description:
      'Present, `true`, when this is the replay of an earlier request with the same `Idempotency-Key` and request.',
  },
} as const;

/**
 * The key an `Idempotency-Key` header names (the schema has checked its
 * form): a string's content, or the token itself; undefined without one.
 */
export function idempotencyKeyOf(headers: { [IDEMPOTENCY_KEY_HEADER]?: string }): string | undefined {
  const header = headers[IDEMPOTENCY_KEY_HEADER];
  if (header === undefined) return undefined;
  return header.startsWith('"') ? header.slice(1, -1).replace(/\\(["\\])/g, '$1') : header;
}

/** Says on the answer that it is the replay of an earlier request with the same key, when it is. */
export function markReplayed(
  reply: { header(name: string, value: string): unknown },
  answered: { replayed: boolean },
): void {
  if (answered.replayed) reply.header(IDEMPOTENT_REPLAYED_HEADER, 'true');
}
