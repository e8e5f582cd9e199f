import ipaddr from 'ipaddr.js';

/**
 * What kind of address an IP is, for everything Berth connects to on a user's behalf (the egress,
 * webhook deliveries): `public` (a global unicast address
 * somewhere on the internet) or the name of the special range that must stay out of a user's reach
 * (loopback, private, link-local — the cloud metadata service lives there —, carrier-grade NAT,
 * unique-local, multicast, documentation, IPv6 forms that embed an IPv4 address, …).
 */
export type AddressClass = 'public' | (string & {});

const unbracket = (host: string): string => (host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host);

/**
 * Classifies an address. IPv4-mapped IPv6 (`::ffff:127.0.0.1`) is judged as the IPv4 address it
 * carries; every other IPv6 range that embeds IPv4 (NAT64, 6to4, Teredo) is refused outright,
 * since what it reaches depends on a gateway Berth does not see.
 */
export function classifyAddress(address: string): AddressClass {
  const raw = unbracket(address);
  if (!ipaddr.isValid(raw)) return 'invalid';
  const parsed = ipaddr.process(raw);
  const range = parsed.range();
  return range === 'unicast' ? 'public' : range;
}

export const isPublicAddress = (address: string): boolean => classifyAddress(address) === 'public';

/** The canonical text of an address (`127.1` → `127.0.0.1`, `::ffff:7f00:1` → `127.0.0.1`). */
export function canonicalAddress(address: string): string {
  return ipaddr.process(unbracket(address)).toString();
}

/** Names every resolver keeps on the machine itself, whatever DNS says. */
export const isLocalName = (host: string): boolean => host === 'localhost' || host.endsWith('.localhost') || host.endsWith('.local') || host.endsWith('.internal');
