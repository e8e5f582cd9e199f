import { normalizeHost } from '@berth/contracts';

/** Names every resolver keeps on the machine itself, whatever DNS says. */
export const isLocalName = (host: string): boolean => host === 'localhost' || host.endsWith('.localhost') || host.endsWith('.local') || host.endsWith('.internal');

/** Whether `host` (normalized) is matched by the `allowed_hosts` entry `pattern` (see `isHostPattern`). */
export function hostMatches(pattern: string, host: string): boolean {
  const p = normalizeHost(pattern);
  if (p.startsWith('*.')) return host.endsWith(p.slice(1)) && host.length > p.length - 1;
  return p === host;
}
