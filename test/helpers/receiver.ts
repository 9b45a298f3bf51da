import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A delivery as a receiver got it. */
export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
}

/** How the receiver answers one delivery: a status (and headers), or nothing at all (`hang`). */
export type Answer = number | { status: number; headers?: Record<string, string>; body?: string } | 'hang';

export interface Receiver {
  url: string;
  received: Received[];
  /** What the next deliveries get, in order; then `otherwise`. */
  answers: Answer[];
  otherwise: Answer;
  close(): Promise<void>;
}

/** A real HTTP server on 127.0.0.1 that keeps every delivery and answers as the test says. */
export async function startReceiver(otherwise: Answer = 200): Promise<Receiver> {
  const hanging: ServerResponse[] = [];
  const receiver: Receiver = { url: '', received: [], answers: [], otherwise, close: async () => {} };
  const server: Server = createServer((request, response) => {
    let body = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => (body += chunk));
    request.on('end', () => {
      receiver.received.push({ headers: request.headers, body });
      const answer = receiver.answers.shift() ?? receiver.otherwise;
      if (answer === 'hang') return void hanging.push(response);
      const { status, headers = {}, body: text = '' } = typeof answer === 'number' ? { status: answer } : answer;
      response.writeHead(status, headers).end(text);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  receiver.close = async () => {
    for (const response of hanging) response.destroy();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  };
  return receiver;
}
