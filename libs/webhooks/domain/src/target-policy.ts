import { BlockList, isIP } from 'node:net';

/**
 * Where deliveries may go. A webhook URL is chosen by an API user, so without this a user could
 * make Berth's own network POST to the platform (`http://127.0.0.1:4222`, a cloud metadata address,
 * a neighbour on the private network). Deliveries go only to public addresses unless the operator
 * sets `BERTH_WEBHOOK_ALLOW_PRIVATE_TARGETS=true` (a private network of receivers; the tests'
 * loopback receiver). The check runs on the registered URL and again on every address the name
 * resolves to when connecting, so a name that later points inward is refused too.
 */
export type TargetPolicy = Readonly<{ allowPrivateTargets: boolean }>;

const NOT_PUBLIC: readonly (readonly [string, number, 'ipv4' | 'ipv6'])[] = [
  ['0.0.0.0', 8, 'ipv4'], // "this network"
  ['10.0.0.0', 8, 'ipv4'],
  ['100.64.0.0', 10, 'ipv4'], // carrier-grade NAT
  ['127.0.0.0', 8, 'ipv4'],
  ['169.254.0.0', 16, 'ipv4'], // link-local, cloud metadata
  ['172.16.0.0', 12, 'ipv4'],
  ['192.0.0.0', 24, 'ipv4'],
  ['192.168.0.0', 16, 'ipv4'],
  ['198.18.0.0', 15, 'ipv4'], // benchmarking
  ['224.0.0.0', 4, 'ipv4'], // multicast
  ['240.0.0.0', 4, 'ipv4'], // reserved, broadcast
  ['::', 128, 'ipv6'],
  ['::1', 128, 'ipv6'],
  ['64:ff9b::', 96, 'ipv6'], // NAT64 of an IPv4 address
  ['fc00::', 7, 'ipv6'], // unique local
  ['fe80::', 10, 'ipv6'], // link-local
  ['ff00::', 8, 'ipv6'], // multicast
];

const notPublic = new BlockList();
for (const [network, prefix, family] of NOT_PUBLIC) notPublic.addSubnet(network, prefix, family);

/** Why Berth may not connect to this IP address, or null when it may (IPv4-mapped IPv6 is judged as its IPv4). */
export function addressRefusal(address: string, policy: TargetPolicy): string | null {
  const family = isIP(address);
  if (family === 0) return `${address} is not an IP address`;
  if (policy.allowPrivateTargets) return null;
  return notPublic.check(address, family === 4 ? 'ipv4' : 'ipv6') ? `${address} is a loopback, private, link-local or reserved address` : null;
}

/** Why a registered URL is refused before any lookup: a literal address that is not public, or a local name. */
export function urlRefusal(url: string, policy: TargetPolicy): string | null {
  const host = new URL(url).hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (isIP(host) !== 0) return addressRefusal(host, policy);
  if (policy.allowPrivateTargets) return null;
  return host === 'localhost' || host.endsWith('.localhost') || !host.includes('.') ? `${host} is a local name` : null;
}
