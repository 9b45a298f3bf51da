import { spawn, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import * as client from 'openid-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NEWEST_VERSION } from '../../src/versions/versions.js';
import { cli, freePort, ROOT, type Run, type Server, startServer, tempDir } from '../helpers/process.js';

/**
 * OAuth clients no one here wrote, against the built service (docs/tokens.md): openid-client (Node.js) finds the
 * service by RFC 8414 discovery at its issuer, gets a token by the client credentials grant, the key's id and key
 * sent by HTTP Basic and in the form, and the token reads a pet; so does Python's requests-oauthlib
 * (examples/python/oauth_client.py), on whichever Python 3 here has it. The issuer is PUBLIC_URL, and both clients
 * check that it is the URL they were given: the service's, on 127.0.0.1.
 */

let server: Server;
let issuer: string;
let clientId: string;
let clientSecret: string;

beforeAll(async () => {
  const database = join(tempDir(), 'p.db');
  // startServer picks a port of its own and leaves PUBLIC_URL at http://localhost:<port>: the port is chosen here
  // instead (PORT overrides startServer's, whose `url` is then not the service's) so that PUBLIC_URL can name it.
  const port = await freePort();
  issuer = `http://127.0.0.1:${port}`;
  server = await startServer({ DATABASE_URL: database, DEMO_KEYS: 'false', PORT: String(port), PUBLIC_URL: issuer });
  const created = await cli(['keys', 'create', '--plan', 'pro', '--json'], { DATABASE_URL: database });
  ({ id: clientId, key: clientSecret } = JSON.parse(created.stdout) as { id: string; key: string });
});
afterAll(async () => server?.stop());

/** A request openid-client sent, as it handed it to fetch. */
interface Sent {
  method: string;
  path: string;
  headers: Headers;
  form: URLSearchParams;
}

describe('openid-client', () => {
  const AUTHENTICATION = { client_secret_basic: client.ClientSecretBasic, client_secret_post: client.ClientSecretPost };

  it.each(['client_secret_basic', 'client_secret_post'] as const)(
    'discovers the service at its issuer, gets a token by the client credentials grant (%s), reads a pet with it',
    async (method) => {
      const sent: Sent[] = [];
      const recording: client.CustomFetch = (url, options) => {
        sent.push({
          method: options.method,
          path: new URL(url).pathname,
          headers: new Headers(options.headers),
          form: new URLSearchParams(
            typeof options.body === 'string' || options.body instanceof URLSearchParams ? options.body : undefined,
          ),
        });
        // openid-client's body type names Uint8Array more loosely than Node's fetch types do; it is fetch's.
        return fetch(url, options as RequestInit);
      };
      // Plain http on 127.0.0.1: the library's own switch for a server without TLS, for discovery and what follows.
      const config = await client.discovery(new URL(issuer), clientId, clientSecret, AUTHENTICATION[method](), {
        algorithm: 'oauth2',
        execute: [client.allowInsecureRequests],
        [client.customFetch]: recording,
      });
      const metadata = config.serverMetadata();
      expect([metadata.issuer, metadata.token_endpoint]).toEqual([issuer, `${issuer}/oauth/token`]);

      const tokens = await client.clientCredentialsGrant(config, { scope: 'pets:read' });
      // Fields one by one: a failure must not print the token. (openid-client lower-cases the service's `Bearer`.)
      expect([tokens.token_type, tokens.scope, tokens.expires_in]).toEqual(['bearer', 'pets:read', 3600]);

      const answer = await client.fetchProtectedResource(
        config,
        tokens.access_token,
        new URL(`${issuer}/pets/1`),
        'GET',
        undefined,
        new Headers({ 'petstore-version': NEWEST_VERSION }),
      );
      expect(answer.status).toBe(200);
      expect(await answer.json()).toMatchObject({ id: 1 });

      // What the library sent: discovery at RFC 8414's address, the token request authenticated the way asked
      // (never both ways: the service refuses that), the pet with the token.
      expect(sent.map(({ method, path }) => `${method} ${path}`)).toEqual([
        'GET /.well-known/oauth-authorization-server',
        'POST /oauth/token',
        'GET /pets/1',
      ]);
      const [, token, read] = sent as [Sent, Sent, Sent];
      expect({
        basic: token.headers.get('authorization')?.startsWith('Basic ') ?? false,
        inForm: token.form.has('client_secret'),
      }).toEqual({ basic: method === 'client_secret_basic', inForm: method === 'client_secret_post' });
      expect(token.form.get('grant_type')).toBe('client_credentials');
      expect(read.headers.get('authorization') === `Bearer ${tokens.access_token}`).toBe(true);
      expect(read.headers.has('x-api-key')).toBe(false);
    },
  );
});

/**
 * The first Python 3 here that imports requests_oauthlib: the one on PATH (pyenv's shim, say, which does not see
 * Debian's packages), else Debian's own. None: in CI (CI=true), where .ci/run installs python3-requests-oauthlib,
 * the suite fails; elsewhere it is skipped, with the reason printed.
 */
function pythonWithRequestsOauthlib(): string | null {
  for (const python of ['python3', '/usr/bin/python3']) {
    if (spawnSync(python, ['-c', 'import requests_oauthlib'], { stdio: 'ignore' }).status === 0) return python;
  }
  const how = 'apt-get install python3-requests-oauthlib, or pip install requests-oauthlib';
  if (process.env.CI === 'true') throw new Error(`no Python 3 here imports requests_oauthlib (.ci/run: ${how})`);
  console.warn(`requests-oauthlib suite skipped: no Python 3 here imports requests_oauthlib (${how})`);
  return null;
}

const python = pythonWithRequestsOauthlib();

/** examples/python/oauth_client.py against the service, the credentials in its environment (never its arguments). */
function oauthClient(args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn(python!, ['examples/python/oauth_client.py', ...args], {
      cwd: ROOT,
      env: {
        ...process.env,
        PETSTORE_URL: issuer,
        PETSTORE_CLIENT_ID: clientId,
        PETSTORE_CLIENT_SECRET: clientSecret,
      },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

describe.skipIf(python === null)("Python's requests-oauthlib", () => {
  it.each([
    ['client_secret_basic', []],
    ['client_secret_post', ['--post']],
  ])('gets a token by the client credentials grant (%s) and reads a pet with it', async (method, args) => {
    const run = await oauthClient(args);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({
      authentication: method,
      token_type: 'Bearer',
      expires_in: 3600,
      scope: ['pets:read'],
      status: 200,
      authorization: 'Bearer',
      pet: 'Rex',
    });
  });
});
