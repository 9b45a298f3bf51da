import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort, tempDir } from './process.js';

const SHIPPED = new URL('../../deploy/nginx.conf', import.meta.url);

/** Whether nginx can run here; in CI it must (CI=true), elsewhere its suites skip with the reason printed. */
export function nginxInstalled(): boolean {
  if (spawnSync('nginx', ['-v']).error === undefined) return true;
  if (process.env.CI === 'true') throw new Error('nginx is not installed; .ci/run installs nginx-light');
  console.warn('nginx suites skipped: nginx is not installed (apt-get install nginx-light)');
  return false;
}

export interface Nginx {
  url: string;
  stop(): Promise<void>;
}

/**
 * Runs the shipped deploy/nginx.conf, changed only in its ports: the listen port and the two
 * upstream instances of this test.
 */
export async function startNginx(upstreams: [string, string]): Promise<Nginx> {
  const port = await freePort();
  const [first, second] = upstreams.map((u) => new URL(u).port);
  const config = readFileSync(SHIPPED, 'utf8')
    .replace('listen 127.0.0.1:8000;', `listen 127.0.0.1:${port};`)
    .replace('server 127.0.0.1:8080;', `server 127.0.0.1:${first};`)
    .replace('server 127.0.0.1:8090;', `server 127.0.0.1:${second};`);
  if (!config.includes(`:${port};`) || !config.includes(`:${first};`) || !config.includes(`:${second};`)) {
    throw new Error('deploy/nginx.conf no longer has the ports this test replaces');
  }
  const prefix = tempDir();
  mkdirSync(join(prefix, 'logs'), { recursive: true });
  writeFileSync(join(prefix, 'nginx.conf'), config);
  const child: ChildProcess = spawn('nginx', ['-p', prefix, '-c', join(prefix, 'nginx.conf'), '-g', 'daemon off;'], {
    stdio: 'ignore',
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 5_000;
  while (
    !(await fetch(`${url}/openapi.json`).then(
      (r) => r.ok,
      () => false,
    ))
  ) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error('nginx did not start');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    url,
    stop: async () => {
      child.kill('SIGQUIT');
      await exited;
    },
  };
}
