/**
 * The flood of bench/unknown-keys.ts, in a process of its own so that it does not slow the load
 * generator measuring the valid keys beside it: FLOOD_URL, FLOOD_CONNECTIONS, FLOOD_SECONDS; writes
 * `flooding` to stderr at its first answer, and prints `{ rps, statuses }` as JSON.
 */
import { randomBytes } from 'node:crypto';
import autocannon from 'autocannon';

const keys = Array.from({ length: 2_000 }, () => `pet_${randomBytes(24).toString('base64url')}`);
const result = await new Promise<autocannon.Result>((resolve, reject) => {
  const instance = autocannon(
    {
      url: process.env.FLOOD_URL!,
      connections: Number(process.env.FLOOD_CONNECTIONS),
      duration: Number(process.env.FLOOD_SECONDS),
      requests: keys.map((key) => ({ method: 'GET', path: '/pets/1', headers: { 'x-api-key': key } })),
    },
    (error, result) => (error ? reject(error) : resolve(result)),
  );
  // Told once the flood is answered, so that what is measured beside it is the flood, not this process starting.
  instance.once('response', () => process.stderr.write('flooding\n'));
});
const statuses = { '2xx': result['2xx'], '4xx': result['4xx'], '5xx': result['5xx'] };
process.stdout.write(JSON.stringify({ rps: Math.round(result.requests.average), statuses }));
