import { parseIsoUtc } from '@berth/core';

/**
 * Whether the bound sandbox's lease is over. Conservative: only a bound sandbox with a parseable
 * expiry in the past counts (an offset-less timestamp is UTC). Expiry alone is not proof of death:
 * it triggers a recover, which probes the sandbox.
 */
export function boundLeaseExpired(binding: Readonly<{ sandbox_id?: string | null; expires_at?: string | null }> | null, now: Date): boolean {
  if (!binding?.sandbox_id) return false;
  const expiresAt = parseIsoUtc(binding.expires_at);
  return expiresAt !== null && expiresAt.getTime() <= now.getTime();
}
