import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BUILT, freePort, startServer, tempDir } from '../helpers/process.js';

/** A JSON access line, as pino writes it. */
const JSON_LINE = /^\{"level":30,"time":\d+,.*"msg":"request completed"\}\r?$/m;
/** A line for people: time, level, message (pino-pretty), colours (terminal escapes) or not. */
// eslint-disable-next-line no-control-regex -- the escapes are what colours look like on a terminal.
const PRETTY_LINE = /^\[\d\d:\d\d:\d\d\.\d{3}\] (\x1b\[[\d;]*m)*INFO(\x1b\[[\d;]*m)*: .*request completed/m;

/**
 * The service under a real terminal: `script` gives it a pseudo-terminal for standard output. It is
 * ended once it has logged a request (closing the terminal hangs it up).
 */
async function underTerminal(env: Record<string, string>): Promise<string> {
  const [port, adminPort] = [await freePort(), await freePort()];
  const command = `exec ${process.execPath} ${BUILT.service}`;
  const child = spawn('script', ['-qfec', command, '/dev/null'], {
    env: {
      ...process.env,
      HOST: '127.0.0.1',
      PORT: String(port),
      ADMIN_PORT: String(adminPort),
      DEMO_KEYS: 'false',
      DATABASE_URL: join(tempDir(), 'p.db'),
      ...env,
    },
  });
  let output = '';
  child.stdout.on('data', (d) => (output += d));
  try {
    const deadline = Date.now() + 20_000;
    while (
      !(await fetch(`http://127.0.0.1:${adminPort}/healthz`).then(
        (r) => r.ok,
        () => false,
      ))
    ) {
      if (Date.now() > deadline || child.exitCode !== null) throw new Error(`did not start: ${output}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    await fetch(`http://127.0.0.1:${port}/pets/1`);
    while (!/request completed/.test(output) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    return output;
  } finally {
    child.kill('SIGKILL');
  }
}

/** The service with standard output on a pipe (as under a supervisor or a log collector). */
async function onPipe(env: Record<string, string>): Promise<string> {
  const server = await startServer({
    LOG_LEVEL: 'info',
    DEMO_KEYS: 'false',
    DATABASE_URL: join(tempDir(), 'p.db'),
    ...env,
  });
  try {
    await fetch(`${server.url}/pets/1`);
    const deadline = Date.now() + 5_000;
    while (!/request completed/.test(server.output()) && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 50));
    return server.output();
  } finally {
    await server.stop();
  }
}

describe('log lines, for people on a terminal and for machines elsewhere', () => {
  it('are pretty-printed when standard output is a terminal', async () => {
    const output = await underTerminal({ LOG_LEVEL: 'info' });
    expect(output).toMatch(PRETTY_LINE);
    expect(output).not.toMatch(JSON_LINE);
  });

  it('are JSON, one object a line, on a pipe', async () => {
    const output = await onPipe({});
    expect(output).toMatch(JSON_LINE);
    expect(output).not.toMatch(PRETTY_LINE);
  });

  it('follow LOG_FORMAT where it is set: json on a terminal, pretty on a pipe', async () => {
    const terminal = await underTerminal({ LOG_LEVEL: 'info', LOG_FORMAT: 'json' });
    expect(terminal).toMatch(JSON_LINE);
    expect(terminal).not.toMatch(PRETTY_LINE);
    const pipe = await onPipe({ LOG_FORMAT: 'pretty' });
    expect(pipe).toMatch(PRETTY_LINE);
    expect(pipe).not.toMatch(JSON_LINE);
  });
});
