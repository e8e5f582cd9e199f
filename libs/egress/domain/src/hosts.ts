import { normalizeHost } from '@berth/contracts';

/** Whether `host` (normalized) is matched by the `allowed_hosts` entry `pattern` (see `isHostPattern`). */
export function hostMatches(pattern: string, host: string): boolean {
  const p = normalizeHost(pattern);
  if (p.startsWith('*.')) return host.endsWith(p.slice(1)) && host.length > p.length - 1;
  return p === host;
}
