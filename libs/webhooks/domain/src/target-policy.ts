import { classifyAddress, isLocalName } from '@berth/core';

/**
 * Where deliveries may go. A webhook URL is chosen by an API user, so without this a user could
 * make Berth's own network POST to the platform (`http://127.0.0.1:4222`, a cloud metadata address,
 * a neighbour on the private network). Deliveries go only to public addresses unless the operator
 * sets `BERTH_WEBHOOK_ALLOW_PRIVATE_TARGETS=true` (a private network of receivers; the tests'
 * loopback receiver). The check runs on the registered URL and again on every address the name
 * resolves to when connecting, so a name that later points inward is refused too.
 */
export type TargetPolicy = Readonly<{ allowPrivateTargets: boolean }>;

/** Why Berth may not connect to this IP address, or null when it may (IPv4-mapped IPv6 is judged as its IPv4). */
export function addressRefusal(address: string, policy: TargetPolicy): string | null {
  const range = classifyAddress(address);
  if (range === 'invalid') return `${address} is not an IP address`;
  if (policy.allowPrivateTargets || range === 'public') return null;
  return `${address} is not a public address (${range})`;
}

/** Why a registered URL is refused before any lookup: a literal address that is not public, or a local name. */
export function urlRefusal(url: string, policy: TargetPolicy): string | null {
  const host = new URL(url).hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (classifyAddress(host) !== 'invalid') return addressRefusal(host, policy);
  if (policy.allowPrivateTargets) return null;
  return isLocalName(host) || !host.includes('.') ? `${host} is a local name` : null;
}
