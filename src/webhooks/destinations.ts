import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP } from 'node:net';

/**
 * Where webhooks may go (contract §9): `http` and `https` URLs; in production (unless
 * `WEBHOOK_ALLOW_PRIVATE`) never to a loopback, private, link-local, shared or metadata address, judged
 * on the address a delivery actually connects to (a name that resolves to 127.0.0.1 is refused as
 * 127.0.0.1 is), so that a webhook cannot be made to reach inside the network the service runs in.
 */
export interface DestinationPolicy {
  allowPrivate: boolean;
}

const PRIVATE = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 3],
] as const) {
  PRIVATE.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 127],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const) {
  PRIVATE.addSubnet(network, prefix, 'ipv6');
}

/** Why an address may not be connected to, or undefined. IPv4 carried in IPv6 (mapped, NAT64) is judged as IPv4. */
export function privateAddress(address: string): string | undefined {
  const family = isIP(address);
  if (family === 0) return `${address} is not an IP address`;
  const embedded = family === 6 ? /^(?:::ffff:|64:ff9b::)(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1] : undefined;
  if (embedded !== undefined) return privateAddress(embedded);
  return PRIVATE.check(address, family === 4 ? 'ipv4' : 'ipv6') ? `${address} is a loopback, private, link-local or reserved address` : undefined;
}

/** Why a URL may not be a webhook destination, or undefined: its form, and in production where its name resolves. */
export async function refusalOf(url: string, policy: DestinationPolicy): Promise<string | undefined> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'not an absolute URL';
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return 'only http and https URLs can receive webhooks';
  if (parsed.username || parsed.password) return 'a URL with credentials in it would put them in every log that shows it';
  if (policy.allowPrivate) return undefined;
  const host = parsed.hostname.replace(/^\[|\]$/g, '');
  let addresses: LookupAddress[];
  try {
    addresses = await resolve(host);
  } catch {
    return `${host} does not resolve`;
  }
  for (const { address } of addresses) {
    const refused = privateAddress(address);
    if (refused) return `${host} resolves to ${refused}`;
  }
  return undefined;
}

function resolve(host: string): Promise<LookupAddress[]> {
  return new Promise((done, fail) => dnsLookup(host, { all: true }, (error, addresses) => (error ? fail(error) : done(addresses))));
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for `http.request` that refuses, under the policy, a destination that resolves to an
 * address webhooks may not reach: the check is on the address the request will connect to.
 */
export function guardedLookup(policy: DestinationPolicy) {
  return (hostname: string, options: { all?: boolean }, callback: LookupCallback): void => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, []);
      const refused = policy.allowPrivate ? undefined : addresses.map((a) => privateAddress(a.address)).find(Boolean);
      if (refused) return callback(Object.assign(new Error(`refused: ${refused}`), { code: 'EDESTINATION' }), []);
      if (options.all) return callback(null, addresses);
      const [first] = addresses;
      return callback(null, first!.address, first!.family);
    });
  };
}
