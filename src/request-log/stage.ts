import type { FastifyReply, FastifyRequest } from 'fastify';
import { type Clock, keyNow, REAL_TIME } from '../clock.js';
import { documentPath } from '../http/method-not-allowed.js';
import type { Phases, Stage } from '../http/stages.js';
import type { Exchange } from './exchange.js';
import type { RequestLog } from './log.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** A test key's request being recorded (docs/request-log.md): when it came, what it sent. */
    logged: { real: number; key: number; requestBody?: string; streamed?: Answer } | undefined;
    /** The body's text as sent, kept by the body parsers (JSON, the token endpoint's form) for the request log. */
    bodyText: string | undefined;
  }
}

const FORM = 'application/x-www-form-urlencoded';
const NO_CHECKS: Exchange['checks'] = Object.freeze([]) as unknown as Exchange['checks'];
/** A body longer than this is not held whole: the log keeps 16 KB of it, less once its credentials are cut. */
const HELD_CHARACTERS = 32 * 1024;

/**
 * The request log's stage (docs/request-log.md): every counted API request of a test key, recorded as it happened.
 * It sees the request right after the caller is known, its body once read, and its answer last of all (after the
 * report card graded it and a fault reset its connection, if one did), or the client cutting it off. What it records
 * is held as it was (./exchange.ts): the work of an entry is done when it is read. A live key's request meets one
 * test and nothing else; a route that counts nothing meets nothing.
 */
export function requestLogStage(log: RequestLog, clock: Clock): Stage {
  function arrived(request: FastifyRequest): void {
    const identity = request.identity;
    if (identity.kind !== 'key' || !identity.key.test) return;
    const real = clock();
    request.logged = { real, key: keyNow(identity.clock ?? REAL_TIME, real) };
  }

  function bodyRead(request: FastifyRequest): void {
    const logged = request.logged;
    if (logged === undefined || request.body === undefined) return;
    const form = String(request.headers['content-type'] ?? '').startsWith(FORM);
    const text =
      request.bodyText ??
      (form ? new URLSearchParams(request.body as Record<string, string>).toString() : JSON.stringify(request.body));
    logged.requestBody = held(text);
  }

  function exchangeOf(request: FastifyRequest, path: string, answer: Answer): Exchange {
    const logged = request.logged!;
    request.logged = undefined;
    const fault = request.fault ?? (request.forcedRefusal ? { fault: '429', by: request.forcedRefusal } : undefined);
    return {
      requestId: request.id,
      real: logged.real,
      key: logged.key,
      method: request.method,
      url: request.url,
      path,
      requestHeaders: request.headers,
      requestBody: logged.requestBody,
      status: answer.status,
      responseHeaders: answer.headers,
      responseBody: answer.body === undefined ? undefined : held(answer.body),
      ms: Math.max(0, clock() - logged.real),
      ending: answer.ending,
      fault: fault && { fault: fault.fault, by: fault.by },
      checks: request.checked ?? NO_CHECKS,
    };
  }

  const keyIdOf = (request: FastifyRequest) => (request.identity as { key: { id: string } }).key.id;
  const NO_HEADERS = Object.freeze({});

  return {
    name: 'request-log',
    fields: { logged: undefined, bodyText: undefined },
    forRoute(route): Phases {
      if (!log.recording || !route.api || route.counted === false) return {};
      const path = documentPath(route.url ?? '');
      /** A stream's exchange, once it ended: what it sent, as the stream kept it. */
      const streamEnded = (request: FastifyRequest, ending: 'closed' | 'dropped') => {
        const streamed = request.logged?.streamed;
        if (!streamed) return false;
        const transcript = request.eventStream?.transcript;
        const body = transcript ? { body: transcript } : {};
        log.record(keyIdOf(request), exchangeOf(request, path, { ...streamed, ...body, ending }));
        return true;
      };
      return {
        onRequest: arrived,
        preValidation: bodyRead,
        onSend(request: FastifyRequest, reply: FastifyReply, payload: unknown) {
          if (!request.logged) return payload;
          // An event stream is recorded at its end, as it ended.
          if (route.stream && request.eventStream && reply.statusCode === 200) {
            request.logged.streamed = { status: 200, headers: reply.getHeaders(), ending: 'answered' };
            return payload;
          }
          const answer: Answer =
            request.fault?.fault === 'reset'
              ? { status: null, headers: NO_HEADERS, ending: 'reset' }
              : {
                  status: reply.statusCode,
                  headers: reply.getHeaders(),
                  // A HEAD's answer carries no body, whatever the route made.
                  ...(typeof payload === 'string' && payload !== '' && request.method !== 'HEAD'
                    ? { body: payload }
                    : {}),
                  ending: 'answered',
                };
          log.record(keyIdOf(request), exchangeOf(request, path, answer));
          return payload;
        },
        // The service ended the stream (a drop, a stop, a revocation): Fastify's answer finished.
        onResponse: route.stream ? (request: FastifyRequest) => void streamEnded(request, 'dropped') : undefined,
        onRequestAbort(request: FastifyRequest) {
          if (!request.logged || streamEnded(request, 'closed')) return;
          const keyId = keyIdOf(request);
          const cut = () =>
            log.record(keyId, exchangeOf(request, path, { status: null, headers: NO_HEADERS, ending: 'cut' }));
          // The card grades a cut request as it learns of it: its outcomes come once that settles.
          if (request.grading) void request.grading.then(cut);
          else cut();
        },
      };
    },
  };
}

/** A body as held: whole, or, when much longer than what the log keeps, its start. */
const held = (text: string) => (text.length > HELD_CHARACTERS ? text.slice(0, HELD_CHARACTERS) : text);

interface Answer {
  status: number | null;
  headers: Exchange['responseHeaders'];
  body?: string;
  ending: Exchange['ending'];
}
