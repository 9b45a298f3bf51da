/**
 * The Petstore TypeScript client. Standalone: it imports nothing from the server, so the folder can be
 * copied into another project as it is.
 */

export type { DeprecationHook, DeprecationNotice } from './deprecation.js';
export { warnOnStderr } from './deprecation.js';
export * from './errors.js';
export type { components, operations, paths } from './generated/schema.js';
export { API_VERSION } from './generated/schema.js';
export * from './petstore-client.js';
export type { RateLimitState, RateLimitWindow } from './rate-limit.js';
export { TOLERANCE_SECONDS, type VerifyOptions, verifyWebhook, WebhookVerificationError } from './webhooks.js';
export type { Fetch, ResponseEvent, TransportOptions } from './transport.js';
