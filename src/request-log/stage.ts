import type { FastifyReply, FastifyRequest } from 'fastify';
import { type Clock, keyNow, REAL_TIME } from '../clock.js';
import { documentPath } from '../http/method-not-allowed.js';
import type { Phases, Stage } from '../http/stages.js';
import type { LogEntry } from './entry.js';
import { keptBody, redacted, redactedHeaders } from './redact.js';
import type { RequestLog } from './store.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** A test key's request being recorded (docs/request-log.md): when it came, what it sent. */
    logged: { real: number; key: number; requestBody?: string; truncated: boolean } | undefined;
    /** The body's text as sent, kept by the body parsers (JSON, the token endpoint's form) for the request log. */
    bodyText: string | undefined;
  }
}

const FORM = 'application/x-www-form-urlencoded';

/**
 * The request log's stage (docs/request-log.md): every counted API request of a test key, recorded as it happened.
 * It sees the request right after the caller is known, its body once read, and its answer last of all (after the
 * report card graded it and a fault reset its connection, if one did), or the client cutting it off. A live key's
 * request meets one test and nothing else; a route that counts nothing meets nothing.
 */
export function requestLogStage(log: RequestLog, clock: Clock): Stage {
  function arrived(request: FastifyRequest): void {
    const identity = request.identity;
    if (identity.kind !== 'key' || !identity.key.test) return;
    const real = clock();
    request.logged = { real, key: keyNow(identity.clock ?? REAL_TIME, real), truncated: false };
  }

  function bodyRead(request: FastifyRequest): void {
    const logged = request.logged;
    if (logged === undefined || request.body === undefined) return;
    const form = String(request.headers['content-type'] ?? '').startsWith(FORM);
    const text =
      request.bodyText ??
      (form ? new URLSearchParams(request.body as Record<string, string>).toString() : JSON.stringify(request.body));
    const kept = keptBody(text);
    logged.requestBody = kept.text;
    logged.truncated ||= kept.truncated;
  }

  function entryOf(request: FastifyRequest, path: string, answer: Answer): LogEntry {
    const logged = request.logged!;
    request.logged = undefined;
    const fault = request.fault ?? (request.forcedRefusal ? { fault: '429', by: request.forcedRefusal } : undefined);
    const response = answer.body === undefined ? undefined : keptBody(answer.body);
    return {
      requestId: request.id,
      at: new Date(logged.key).toISOString(),
      receivedAt: new Date(logged.real).toISOString(),
      method: request.method,
      url: redacted(request.url),
      path,
      requestHeaders: redactedHeaders(request.headers),
      ...(logged.requestBody === undefined ? {} : { requestBody: logged.requestBody }),
      status: answer.status,
      responseHeaders: answer.headers,
      ...(response === undefined ? {} : { responseBody: response.text }),
      ...(logged.truncated || response?.truncated ? { truncated: true as const } : {}),
      ms: Math.max(0, clock() - logged.real),
      ending: answer.ending,
      ...(fault ? { fault: { fault: fault.fault, by: fault.by } } : {}),
      checks: (request.checked ?? []).map(({ id, outcome, detail }) => ({
        id,
        outcome,
        ...(detail === undefined ? {} : { detail }),
      })),
    };
  }

  const keyIdOf = (request: FastifyRequest) => (request.identity as { key: { id: string } }).key.id;

  return {
    name: 'request-log',
    fields: { logged: undefined, bodyText: undefined },
    forRoute(route): Phases {
      if (!log.recording || !route.api || route.counted === false) return {};
      const path = documentPath(route.url ?? '');
      return {
        onRequest: arrived,
        preValidation: bodyRead,
        onSend(request: FastifyRequest, reply: FastifyReply, payload: unknown) {
          if (!request.logged) return payload;
          const reset = request.fault?.fault === 'reset';
          const answer: Answer = reset
            ? { status: null, headers: {}, ending: 'reset' }
            : {
                status: reply.statusCode,
                headers: redactedHeaders(reply.getHeaders() as Record<string, string | string[] | number>),
                // A HEAD's answer carries no body, whatever the route made.
                ...(typeof payload === 'string' && payload !== '' && request.method !== 'HEAD'
                  ? { body: payload }
                  : {}),
                ending: 'answered',
              };
          log.record(keyIdOf(request), entryOf(request, path, answer));
          return payload;
        },
        onRequestAbort(request: FastifyRequest) {
          if (!request.logged) return;
          const keyId = keyIdOf(request);
          const cut = () => log.record(keyId, entryOf(request, path, { status: null, headers: {}, ending: 'cut' }));
          // The card grades a cut request as it learns of it: its outcomes come once that settles.
          if (request.grading) void request.grading.then(cut);
          else cut();
        },
      };
    },
  };
}

interface Answer {
  status: number | null;
  headers: Record<string, string>;
  body?: string;
  ending: LogEntry['ending'];
}
