import { describe, expect, it } from 'vitest';
import { isPublicAddress } from '../../src/webhooks/destinations.js';

/** Addresses judged by their bytes, not their spelling (docs/webhooks.md): the check alone, no connection. */

describe('an address webhooks may connect to', () => {
  it.each([
    ['93.184.216.34', 'public IPv4'],
    ['2606:2800:220:1::', 'global IPv6'],
    ['::ffff:93.184.216.34', 'public IPv4, mapped'],
    ['::ffff:5db8:d822', 'the same, in hex'],
    ['64:ff9b::5db8:d822', 'public IPv4 through NAT64'],
    ['2002:5db8:d822::1', 'public IPv4 through 6to4'],
  ])('allows %s (%s)', (address) => {
    expect(isPublicAddress(address)).toBe(true);
  });

  it.each([
    ['127.0.0.1', 'loopback'],
    ['10.0.0.1', 'private'],
    ['169.254.169.254', 'link-local: cloud metadata'],
    ['100.64.0.1', 'shared address space'],
    ['0.0.0.0', 'this network'],
    ['192.0.2.1', 'documentation'],
    ['224.0.0.1', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['::1', 'IPv6 loopback'],
    ['::', 'IPv6 unspecified'],
    ['fe80::1', 'IPv6 link-local'],
    ['fd00:ec2::254', 'IPv6 unique local: cloud metadata'],
    ['ff02::1', 'IPv6 multicast'],
    ['2001:db8::1', 'IPv6 documentation'],
    ['::ffff:127.0.0.1', 'loopback, mapped'],
    ['::ffff:7f00:1', 'loopback, mapped, in hex'],
    ['0:0:0:0:0:FFFF:7F00:0001', 'loopback, mapped, written out'],
    ['::7f00:1', 'loopback, IPv4-compatible (as new URL writes [::127.0.0.1])'],
    ['::ffff:0:7f00:1', 'loopback, IPv4-translated'],
    ['64:ff9b::a00:1', 'private through NAT64 (as new URL writes [64:ff9b::10.0.0.1])'],
    ['64:ff9b::a9fe:a9fe', 'metadata through NAT64, in hex'],
    ['64:ff9b::169.254.169.254', 'metadata through NAT64, dotted'],
    ['64:ff9b:1::a00:1', 'NAT64 for local use'],
    ['2002:7f00:1::', 'loopback through 6to4'],
    ['2002:a9fe:a9fe::1', 'metadata through 6to4'],
    ['2001:0:4136:e378:8000:63bf:80ff:fffe', 'Teredo whose client is 127.0.0.1'],
    ['2001:0:a00:1:8000:63bf:a2ff:2dd7', 'Teredo whose server is 10.0.0.1'],
    ['fe80::1%eth0', 'link-local with a zone'],
    ['localhost', 'a name, not an address'],
    ['[::1]', 'a bracketed address, not an address'],
  ])('refuses %s (%s)', (address) => {
    expect(isPublicAddress(address)).toBe(false);
  });
});
