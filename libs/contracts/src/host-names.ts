import ipaddr from 'ipaddr.js';

/** True for any spelling the system resolver would read as an address (`127.1`, `0x7f000001`, `[::1]`). */
export const isIpLiteral = (host: string): boolean => ipaddr.isValid(host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host);

const LABEL = /^(?!-)[a-z0-9_-]{1,63}(?<!-)$/;
// A last label made of digits (or hex) is how resolvers spell an IPv4 address (`10.1`, `0x7f`): never a name.
const NUMERIC_LABEL = /^(0x[0-9a-f]*|[0-9]+)$/;

/** Lower-case, no brackets around an IPv6 literal, no trailing dot: the form hosts are compared in. */
export function normalizeHost(raw: string): string {
  const lower = raw.trim().toLowerCase();
  const bare = lower.startsWith('[') && lower.endsWith(']') ? lower.slice(1, -1) : lower;
  return bare.endsWith('.') ? bare.slice(0, -1) : bare;
}

/** A DNS name (letters, digits, `-`, `_`; not ending in a number), not an address. */
export function isHostName(host: string): boolean {
  if (host.length === 0 || host.length > 253 || isIpLiteral(host)) return false;
  const labels = host.split('.');
  return labels.every((label) => LABEL.test(label)) && !NUMERIC_LABEL.test(labels[labels.length - 1]);
}

/**
 * An `networking.allowed_hosts` entry: a host name (`api.github.com`), a wildcard for its
 * subdomains (`*.github.com`, which does not match `github.com` itself), or an IP address.
 */
export function isHostPattern(pattern: string): boolean {
  const p = normalizeHost(pattern);
  if (p.startsWith('*.')) return isHostName(p.slice(2));
  return isHostName(p) || isIpLiteral(p);
}
