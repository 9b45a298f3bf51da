import { setFlagsFromString } from 'node:v8';

/**
 * What the service asks of V8 before it serves (main.ts), through Node's documented `v8.setFlagsFromString`.
 *
 * `--no-allocation-site-pretenuring`. V8 watches each object and array literal; when nearly all of one
 * literal's recent objects outlive a scavenge, it allocates that literal's objects in the old generation
 * from then on, for the life of the process. A request's objects die young, but at a cold start many
 * requests are in flight at once, each slow, and one scavenge can catch them all. Some processes had V8
 * so decide for an array made for every request: a turn's `[req, res]` pair (since gone,
 * http/server.ts), or the one `EventEmitter` makes when an event gets its second listener (every
 * response has two for `finish`, Node's and Fastify's). Each such array, allocated old, keeps its
 * request alive until a full collection: every request was promoted, full collections ran over and over, and the
 * process answered slower for its whole life. Without pretenuring a long-lived object is copied once more before it
 * settles, which costs nothing measurable here (docs/performance.md#one-speed-per-process).
 */
export function tuneV8(): void {
  setFlagsFromString('--no-allocation-site-pretenuring');
}
