/**
 * The baseline: bare `node:http` answering every request with the bytes of `GET /pets/1` (BODY),
 * as JSON. What the service does beyond this is the price of its contract.
 *
 * With HEADERS (a JSON object) it answers with those headers instead: the service's own answer, its
 * rate-limit, CORS, deprecation and request-id headers included, sent by nothing but `node:http`. That
 * is the floor: what any Node service sending this exact answer pays, before deciding anything. With
 * STATUS, BODY and HEADERS of a refusal it is a refusal's floor.
 */
import { createServer } from 'node:http';

const body = Buffer.from(process.env.BODY ?? '{}');
const headers: Record<string, string | number> = process.env.HEADERS
  ? JSON.parse(process.env.HEADERS)
  : { 'content-type': 'application/json; charset=utf-8', 'content-length': body.length };

const status = Number(process.env.STATUS ?? 200);

createServer((request, response) => {
  request.resume();
  response.writeHead(status, headers).end(body);
}).listen(Number(process.env.PORT), '127.0.0.1');

process.on('SIGTERM', () => process.exit(0));
