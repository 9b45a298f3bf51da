/**
 * Every step Fastify's pipeline runs for a route the fast lane answers (./fast-lane.ts), and what the
 * lane does in its place: the same code, or the request handed to Fastify, or why the step cannot
 * apply to a request the lane answers. test/http/lane-steps.test.ts reads each lane route's steps from
 * Fastify itself (`printRoutes` with its hooks) and fails on a step this list does not account for, or
 * on one it accounts for that is gone: a step added to the pipeline is decided for the lane too.
 */
const EVERY_LANE_ROUTE: Readonly<Record<string, string>> = {
  // onRequest: the first steps, in order (app.ts), then the API's.
  setRequestId: 'the same: requestIdOf, sent as X-Request-Id',
  cors: 'the same: the headers of the one CORS policy, built once',
  identify: 'the same record, from memory (KeyCache.cached); a key memory does not hold is Fastify’s',
  planFault: 'cannot apply: only test keys have faults, and the lane never answers a test key',
  limit: 'the same: the limiter’s hit, its headers and its refusal (http/ratelimit.ts)',
  failNow: 'cannot apply: only test keys have faults',
  requireHost: 'Fastify’s: a request without Host is handed over (fastifyDecides)',
  refuseUnknownExpectation: 'Fastify’s: Node hands an unknown expectation to Fastify itself (checkExpectation)',
  answerPreflight: 'cannot apply: a preflight is an OPTIONS, and the lane answers GET only',
  rejectUnknownPath: 'cannot apply: the lane answers only the paths its routes match',
  requireKey: 'the same: the lane answers only a valid live key',
  // preParsing
  refuseContentEncoding: 'Fastify’s: a request with a body or an encoding is handed over (fastifyDecides)',
  // onSend
  closeWhenDrainingAndFault: 'the same: Connection: close while draining (`open`); faults cannot apply',
  conditionalSend: 'the same ETag; a request with If-None-Match is handed over (fastifyDecides)',
  // onResponse, onRequestAbort
  recordAnswer: 'the same: `answered` (the metrics and the access line)',
  noteAbort: 'cannot apply: a request the lane answers has no body to be cut off',
};

/** By the route's URL as Fastify knows it. */
export const LANE_STEPS: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  '/pets/:petId': {
    ...EVERY_LANE_ROUTE,
    refuseAfterSunset: 'the same: the pet route answers the sunset’s 410 (pets/get.ts)',
    deprecationHeaders: 'the same: the route’s headers (FastRoute.headers)',
  },
  '/store/orders': {
    ...EVERY_LANE_ROUTE,
    keepPageForLane: 'cannot apply: it keeps the page the lane answers from',
  },
};
