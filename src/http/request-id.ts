import type { FastifyReply, FastifyRequest } from 'fastify';
import { randomBytes } from 'node:crypto';
import { fieldName } from './field-name.js';
import type { Phases, Stage } from './stages.js';
import type { IncomingMessage } from 'node:http';

export const REQUEST_ID_HEADER = 'X-Request-Id';
/** Node hands header names over in lower case. */
const REQUEST_ID_FIELD = REQUEST_ID_HEADER.toLowerCase();

/** Sane: short and plain, so that it cannot smuggle anything into logs or headers. */
export const REQUEST_ID_PATTERN = '^[A-Za-z0-9._:-]{1,128}$';
const SANE = new RegExp(REQUEST_ID_PATTERN);

/**
 * A new id: this process's (96 random bits, base64url) and then a count, so that no two requests of any
 * instance share one, without a random number drawn per request.
 */
const PROCESS_ID = randomBytes(12).toString('base64url');
let issued = 0;

/** The caller's request id when it sent a sane one, else a new one. */
export function requestIdOf(req: IncomingMessage): string {
  const sent = req.headers[REQUEST_ID_FIELD];
  return typeof sent === 'string' && SANE.test(sent) ? sent : `${PROCESS_ID}-${(++issued).toString(36)}`;
}

const REQUEST_ID = fieldName(REQUEST_ID_HEADER);

/** The request id stage: every answer says the request's id, first of all. */
export const requestIdStage: Stage = {
  name: 'request-id',
  forRoute: () => REQUEST_ID_PHASES,
};

const REQUEST_ID_PHASES: Phases = {
  onRequest(request: FastifyRequest, reply: FastifyReply): void {
    reply.header(REQUEST_ID, request.id);
  },
};
