import { spanInWords } from '../ratelimit/ban-prose.js';

/** How long an `Idempotency-Key` is remembered: the same key and body within it get the original response. */
export const IDEMPOTENCY_WINDOW_MS = 24 * 60 * 60 * 1000;

/** The same span as the documents and the `422` say it (`24 hours`). */
export const IDEMPOTENCY_WINDOW_IN_WORDS = spanInWords(IDEMPOTENCY_WINDOW_MS);
