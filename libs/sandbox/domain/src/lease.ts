import { parseIsoUtc } from '@berth/core';
import type { IdlePolicy } from './sandbox-config';

/**
 * When a sandbox's lease runs out: `idleTimeoutSeconds` after the last activity, but never later
 * than `maxLifetimeSeconds` after it started.
 */
export function leaseExpiresAt(input: { lastActivityAt: Date; startedAt: Date; idle: IdlePolicy }): Date {
  const idleEnd = input.lastActivityAt.getTime() + input.idle.idleTimeoutSeconds * 1000;
  const lifetimeEnd =
    input.idle.maxLifetimeSeconds === null ? Number.POSITIVE_INFINITY : input.startedAt.getTime() + input.idle.maxLifetimeSeconds * 1000;
  return new Date(Math.min(idleEnd, lifetimeEnd));
}

/**
 * The conservative expiry predicate the seed pins: only a bound sandbox with a parseable expiry
 * strictly in the past is expired (missing, empty or garbage expiry never is; offset-less = UTC).
 */
export function isLeaseExpired(binding: { sandboxId: string | null | undefined; expiresAt: string | null | undefined }, now: Date): boolean {
  if (!binding.sandboxId) return false;
  const expiry = parseIsoUtc(binding.expiresAt);
  return expiry !== null && expiry.getTime() < now.getTime();
}
