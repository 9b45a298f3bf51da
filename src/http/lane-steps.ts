/**
 * What the fast lane (./fast-lane.ts) does for each step Fastify runs for a route the lane answers,
 * beyond the API's steps (`app.apiSteps`, the `onRequest` steps), which the lane runs itself, the very
 * same list: the same code, or the request handed to Fastify, or why the step cannot apply to a
 * request the lane answers. test/http/lane-steps.test.ts reads each lane route's steps from Fastify
 * itself (`printRoutes` with its hooks) and fails when its `onRequest` steps are not the API's steps in
 * order, or on another step this list does not account for, or on one it accounts for that is gone:
 * a step added to the pipeline is decided for the lane too.
 */
const EVERY_LANE_ROUTE: Readonly<Record<string, string>> = {
  // preValidation
  afterParsing: 'cannot apply: its steps are test keys’ (the report card’s note of the body, a fault), and test keys are handed over',
  // preParsing
  refuseContentEncoding: 'Fastify’s: a request with a body or an encoding is handed over (fastifyDecides)',
  // onSend
  closeWhenDrainingAndFault: 'the same: Connection: close while draining (`open`); faults cannot apply (test keys are handed over)',
  inVersion:
    'the same: the deprecation headers of the version and the route (FastRoute.headersFor: versions/notices.ts), and the answer in that version (FastRoute.answerFor: versions/shape.ts)',
  conditionalSend: 'the same ETag; a request with If-None-Match is handed over (fastifyDecides)',
  // onResponse, onRequestAbort
  recordAnswer: 'the same: `answered` (the metrics and the access line)',
  gradeAnswer: 'cannot apply: only test keys are graded (report-card/), and test keys are handed over',
  noteAbort: 'cannot apply: a request the lane answers has no body to be cut off',
};

/** By the route's URL as Fastify knows it. */
export const LANE_STEPS: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  '/pets/:petId': {
    ...EVERY_LANE_ROUTE,
    refuseAfterSunset: 'the same: the pet route answers the sunset’s 410 (pets/get.ts)',
  },
  '/store/orders': {
    ...EVERY_LANE_ROUTE,
    keepPage: 'cannot apply: it keeps the page the lane answers from',
  },
};
