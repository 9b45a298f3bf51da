import type { App } from '../../src/http/types.js';
import { overSocket, type Received, type Sent } from './over-socket.js';

/** The ADMIN_TOKEN the suites start the admin API with. */
export const ADMIN_TOKEN = 'admin-token-for-tests-0123456789';

export type AdminMethod = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';

/** A request to the admin listener with `Authorization: Bearer <token>`: none when the token is null. */
export function adminRequest(
  admin: App,
  method: AdminMethod,
  url: string,
  payload?: object,
  token: string | null = ADMIN_TOKEN,
) {
  return admin.inject({ method, url, payload, headers: token === null ? {} : { authorization: `Bearer ${token}` } });
}

/**
 * The admin listener listening on 127.0.0.1 (closed with its app):
 * its requests go over a real socket, as an operator's would.
 */
export async function adminOverSocket(admin: App): Promise<(sent: Sent) => Promise<Received>> {
  return overSocket(Number(new URL(await admin.listen({ host: '127.0.0.1', port: 0 })).port));
}
