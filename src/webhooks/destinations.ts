import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * Where webhooks may go (docs/webhooks.md): `http` and `https` URLs; in production (unless
 * `WEBHOOK_ALLOW_PRIVATE`) never to a loopback, private, link-local, shared, reserved or metadata
 * address, judged on the address a delivery actually connects to, whether the URL names a host or
 * an address, so that a webhook cannot be made to reach inside the network the service runs in.
 */
export interface DestinationPolicy {
  allowPrivate: boolean;
}

/**
 * What a refused destination is told, at creation and in an attempt's log: the same words whatever
 * the reason, so that nobody can learn from it what a name resolves to inside the service's network.
 */
export const NOT_ALLOWED = 'the destination is not allowed: webhooks go only to public addresses';

/** IPv4 networks that are not the public internet (IANA's special-purpose registry). */
const PRIVATE_V4 = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 3],
] as const) {
  PRIVATE_V4.addSubnet(network, prefix, 'ipv4');
}

/** IPv6: only global unicast (2000::/3) is public, less what is reserved inside it. */
const PUBLIC_V6 = new BlockList();
PUBLIC_V6.addSubnet('2000::', 3, 'ipv6');
const RESERVED_V6 = new BlockList();
for (const [network, prefix] of [
  ['2001::', 23], // IETF protocol assignments (Teredo's embedding is judged below)
  ['2001:db8::', 32], // documentation
  ['3fff::', 20], // documentation
] as const) {
  RESERVED_V6.addSubnet(network, prefix, 'ipv6');
}

/**
 * The IPv4 addresses an IPv6 address carries, by its bytes, whatever its spelling: mapped
 * (`::ffff:0:0/96`), compatible (`::/96`, `::1` included), translated (`::ffff:0:0:0/96`), NAT64
 * (`64:ff9b::/96`), 6to4 (`2002::/16`) and Teredo (`2001::/32`, its server and its client). Undefined
 * when it carries none.
 */
function embeddedV4(bytes: number[]): string[] | undefined {
  const v4 = (at: number, flip = 0) =>
    bytes
      .slice(at, at + 4)
      .map((b) => b ^ flip)
      .join('.');
  const zero = (from: number, to: number) => bytes.slice(from, to).every((b) => b === 0);
  const word = (at: number) => (bytes[at]! << 8) | bytes[at + 1]!;
  if (zero(0, 10) && word(10) === 0xffff) return [v4(12)];
  if (zero(0, 12)) return [v4(12)];
  if (zero(0, 8) && word(8) === 0xffff && word(10) === 0) return [v4(12)];
  if (word(0) === 0x64 && word(2) === 0xff9b && zero(4, 12)) return [v4(12)];
  if (word(0) === 0x2002) return [v4(2)];
  if (word(0) === 0x2001 && word(2) === 0) return [v4(4), v4(12, 0xff)];
  return undefined;
}

/** Whether webhooks may connect to an IP address (any spelling `ipaddr.js` reads), judged by its bytes. */
export function isPublicAddress(address: string): boolean {
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    parsed = ipaddr.parse(address);
  } catch {
    return false;
  }
  if (parsed.kind() === 'ipv4') return !PRIVATE_V4.check(parsed.toString(), 'ipv4');
  const bytes = parsed.toByteArray();
  const carried = embeddedV4(bytes);
  if (carried) return carried.every((v4) => !PRIVATE_V4.check(v4, 'ipv4'));
  const normal = ipaddr.fromByteArray(bytes).toString();
  return PUBLIC_V6.check(normal, 'ipv6') && !RESERVED_V6.check(normal, 'ipv6');
}

/** The address a URL names, when it names one rather than a host (`[::1]` unbracketed); undefined for a name. */
export function addressOf(url: URL): string | undefined {
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  return isIP(host) === 0 ? undefined : host;
}

/** Why a URL may not be a webhook destination, or undefined: its form, and in production where it leads. */
export async function refusalOf(url: string, policy: DestinationPolicy): Promise<string | undefined> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'not an absolute URL';
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
    return 'only http and https URLs can receive webhooks';
  if (parsed.username || parsed.password)
    return 'a URL with credentials in it would put them in every log that shows it';
  if (policy.allowPrivate) return undefined;
  const literal = addressOf(parsed);
  if (literal !== undefined) return isPublicAddress(literal) ? undefined : NOT_ALLOWED;
  // A name that does not resolve is refused in the same words as one that resolves inside: the
  // difference would tell a caller which internal names exist.
  const addresses = await resolve(parsed.hostname).catch(() => []);
  return addresses.length > 0 && addresses.every((a) => isPublicAddress(a.address)) ? undefined : NOT_ALLOWED;
}

function resolve(host: string): Promise<LookupAddress[]> {
  return new Promise((done, fail) =>
    dnsLookup(host, { all: true }, (error, addresses) => (error ? fail(error) : done(addresses))),
  );
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** The error of an attempt the policy refuses, before any connection. */
export function destinationRefused(): NodeJS.ErrnoException {
  return Object.assign(new Error(`refused: ${NOT_ALLOWED}`), { code: 'EDESTINATION' });
}

/**
 * A `lookup` for `http.request` that refuses, under the policy, a name that resolves to an address
 * webhooks may not reach: the check is on the addresses the request will connect to. (Node calls a
 * `lookup` only for names: the sender judges a URL that names an address itself.)
 */
export function guardedLookup(policy: DestinationPolicy) {
  return (hostname: string, options: { all?: boolean }, callback: LookupCallback): void => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, []);
      if (!policy.allowPrivate && !addresses.every((a) => isPublicAddress(a.address)))
        return callback(destinationRefused(), []);
      if (options.all) return callback(null, addresses);
      const [first] = addresses;
      return callback(null, first!.address, first!.family);
    });
  };
}
