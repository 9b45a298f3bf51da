/**
 * The clients of bench/event-streams.ts, in a process of their own (never in the one that runs autocannon): they
 * open `GET /events/stream` as told over IPC, one connection each (node:http, no keep-alive), and for every event
 * frame note its arrival less its commit (`Date.now() - Date.parse(event.timestamp)`, one clock: the same machine).
 *
 *   { do: 'open', url, keys, perKey }  opens perKey streams of each key (a 409 `stream-limit` is retried: a seat
 *                                      given back on another instance may not be free yet); answers
 *                                      { opened, failed } once each has its `retry:` line, or has failed
 *   { do: 'close' }                    closes every stream; answers { closed }
 *   { do: 'take' }                     answers { latencies, frames, heartbeats, ended } since the last `take`:
 *                                      `ended` counts streams the service ended while they were meant to be open
 */
import { Agent, request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http';

type Command = { do: 'open'; url: string; keys: string[]; perKey: number } | { do: 'close' } | { do: 'take' };

/** Streams being opened at once: enough to open 2,000 in a few seconds, not a connection storm. */
const OPENING_AT_ONCE = 50;
const RETRIES = 20;
const RETRY_PAUSE_MS = 250;

const agent = new Agent({ keepAlive: false, maxSockets: Infinity });
const open = new Set<ClientRequest>();
let closing = false;
let latencies: number[] = [];
let frames = 0;
let heartbeats = 0;
let ended = 0;

const send = (message: object) => process.send!(message);

/** Reads one stream: each frame separated by a blank line; an event frame's `data` is the event JSON. */
function follow(response: IncomingMessage, opened: () => void): void {
  let pending = '';
  let started = false;
  response.setEncoding('utf8');
  response.on('data', (chunk: string) => {
    const arrived = Date.now();
    pending += chunk;
    let end: number;
    while ((end = pending.indexOf('\n\n')) >= 0) {
      const frame = pending.slice(0, end);
      pending = pending.slice(end + 2);
      if (frame.startsWith('retry:')) {
        if (!started) opened();
        started = true;
      } else if (frame.startsWith(':')) heartbeats++;
      else {
        const data = frame.split('\n').find((line) => line.startsWith('data: '));
        if (!data) continue;
        frames++;
        const { timestamp } = JSON.parse(data.slice(6)) as { timestamp: string };
        latencies.push(arrived - Date.parse(timestamp));
      }
    }
  });
}

async function openOne(base: URL, key: string): Promise<number> {
  for (let attempt = 0; ; attempt++) {
    const status = await new Promise<number>((resolve) => {
      const req = httpRequest(
        {
          host: base.hostname,
          port: base.port,
          path: '/events/stream',
          headers: { 'x-api-key': key, accept: 'text/event-stream' },
          agent,
        },
        (response) => {
          if (response.statusCode !== 200) {
            response.resume();
            req.destroy();
            return resolve(response.statusCode ?? 0);
          }
          let started = false;
          open.add(req);
          response.on('close', () => {
            if (open.delete(req) && started && !closing) ended++;
            // Ended before its `retry:` line: a failed opening.
            if (!started) resolve(-2);
          });
          follow(response, () => {
            started = true;
            resolve(200);
          });
        },
      );
      req.on('error', () => {
        open.delete(req);
        resolve(-1);
      });
      req.end();
    });
    if (status === 200 || (status !== 409 && status !== -1) || attempt === RETRIES) return status;
    await new Promise((resolve) => setTimeout(resolve, RETRY_PAUSE_MS));
  }
}

async function openAll(url: string, keys: string[], perKey: number) {
  closing = false;
  const base = new URL(url);
  const wanted = keys.flatMap((key) => Array.from({ length: perKey }, () => key));
  const failed: Record<string, number> = {};
  let opened = 0;
  let next = 0;
  const worker = async () => {
    while (next < wanted.length) {
      const status = await openOne(base, wanted[next++]!);
      if (status === 200) opened++;
      else failed[status] = (failed[status] ?? 0) + 1;
    }
  };
  await Promise.all(Array.from({ length: OPENING_AT_ONCE }, worker));
  return { opened, failed };
}

process.on('message', (command: Command) => {
  void (async () => {
    if (command.do === 'open') send(await openAll(command.url, command.keys, command.perKey));
    else if (command.do === 'close') {
      closing = true;
      const closed = open.size;
      for (const req of open) req.destroy();
      open.clear();
      send({ closed });
    } else {
      send({ latencies, frames, heartbeats, ended });
      latencies = [];
      frames = heartbeats = ended = 0;
    }
  })();
});
process.on('disconnect', () => process.exit(0));
