import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminOverSocket } from '../helpers/admin.js';
import { type TestApp, testApp } from '../helpers/app.js';
import type { Received, Sent } from '../helpers/over-socket.js';

/**
 * Neither a key, the admin token, a webhook secret nor a signature
 * reaches the log, whatever a client sends; over a real socket.
 */

describe('over a real socket', () => {
  describe('secrets never reach the log', () => {
    const TOKEN = 'admin-token-for-tests-0123456789';
    let s: TestApp;
    let adminAt: (sent: Sent) => Promise<Received>;
    const logged: string[] = [];
    beforeAll(async () => {
      s = await testApp({ logLines: logged, env: { ADMIN_TOKEN: TOKEN }, overSocket: true });
      adminAt = await adminOverSocket(s.admin);
    });
    afterAll(async () => s.close());

    /**
     * Every way a client could write `text` into a URL: percent-encoded wholly, partly, twice, in either case of hex.
     */
    const encodings = (text: string) =>
      fc
        .record({
          mask: fc.array(fc.boolean(), { minLength: text.length, maxLength: text.length }),
          upper: fc.boolean(),
          twice: fc.boolean(),
          caseFlip: fc.boolean(),
        })
        .map(({ mask, upper, twice, caseFlip }) => {
          const source = caseFlip ? text.replace(/^pet_/, 'PET_') : text;
          let out = [...source]
            .map((c, i) => (mask[i] ? `%${c.charCodeAt(0).toString(16).padStart(2, '0')}` : c))
            .join('');
          if (upper) out = out.replace(/%[0-9a-f]{2}/g, (e) => e.toUpperCase());
          if (twice) out = out.replace(/%/g, '%25');
          return out;
        });

    /** What a log line says, decoded as often as it decodes: an encoded secret shows through. */
    const decoded = (line: string) => {
      let current = line;
      for (let i = 0; i < 5; i++) {
        const next = current.replace(/(%[0-9a-fA-F]{2})+/g, (run) => {
          try {
            return decodeURIComponent(run);
          } catch {
            return run;
          }
        });
        if (next === current) break;
        current = next;
      }
      return current.toLowerCase();
    };

    it('a key or the admin token in a URL, in any encoding or case, in the path, a query name or value, is not logged', async () => {
      const key = await s.newKey('pro');
      const secrets = [key, TOKEN];
      const where = fc.constantFrom(
        (e: string) => ({ send: s.request, url: `/pets?api_key=${e}` }),
        (e: string) => ({ send: s.request, url: `/pets?${e}=1&status=available` }),
        (e: string) => ({ send: s.request, url: `/pets/${e}` }),
        (e: string) => ({ send: s.request, url: `/store/orders/1/${e}?x=y` }),
        (e: string) => ({ send: adminAt, url: `/admin/keys?token=${e}` }),
        (e: string) => ({ send: adminAt, url: `/admin/${e}` }),
      );
      await fc.assert(
        fc.asyncProperty(
          fc.constantFrom(...secrets).chain((secret) => fc.tuple(fc.constant(secret), encodings(secret), where)),
          async ([secret, encoded, at]) => {
            logged.length = 0;
            const { send, url } = at(encoded);
            await send({ url });
            expect(logged.length).toBeGreaterThan(0);
            const core = secret === TOKEN ? TOKEN : secret.slice('pet_'.length);
            for (const line of logged) expect(decoded(line)).not.toContain(core.toLowerCase());
          },
        ),
        { numRuns: 300 },
      );
    });

    it('logs what is not secret as it was sent: the path and the names of the query parameters', async () => {
      logged.length = 0;
      await s.request({ url: '/pets?status=available&limit=5', headers: { 'x-request-id': 'plain-url' } });
      const line = logged
        .map((l) => JSON.parse(l) as { reqId?: string; req?: { url: string } })
        .find((l) => l.reqId === 'plain-url');
      expect(line?.req?.url).toBe('/pets?status=…&limit=…');
    });
  });

  describe('webhook secrets and signatures never reach the log', () => {
    it('neither when an endpoint is made, rotated and delivered to, nor when a delivery fails', async () => {
      const { startReceiver } = await import('../helpers/receiver.js');
      const { endpointAt, placeOrder, webhooksAs } = await import('../helpers/webhooks.js');
      const logged: string[] = [];
      const t = await testApp({ logLines: logged, overSocket: true });
      const receiver = await startReceiver(500);
      try {
        const key = await t.newKey('pro');
        const endpoint = await endpointAt(t, key, receiver.url);
        const rotated = (await webhooksAs(t, key).post(`/webhook-endpoints/${endpoint.id}/rotate-secret`)).json() as {
          secret: string;
        };
        await placeOrder(t, key);
        await t.dispatcher.runDue();
        receiver.otherwise = 200;
        t.clock.advance(10_000);
        await t.dispatcher.runDue();
        const signatures = receiver.received.flatMap((r) =>
          String(r.headers['webhook-signature'])
            .split(' ')
            .map((s) => s.slice('v1,'.length)),
        );
        expect(signatures.length).toBeGreaterThan(0);
        expect(logged.length).toBeGreaterThan(0);
        const log = logged.join('\n');
        for (const secret of [endpoint.secret, rotated.secret])
          expect(log).not.toContain(secret.slice('whsec_'.length));
        for (const signature of signatures) expect(log).not.toContain(signature);
      } finally {
        await t.close();
        await receiver.close();
      }
    });
  });
});
