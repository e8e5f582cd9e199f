import { ValidationError } from '@berth/core';
import type { HarnessKind, PermissionMode } from '@berth/contracts';

/** Refuses `always_ask` on a harness that cannot hold a tool use for confirmation (rather than silently allowing it). */
export function requireAlwaysAllow(kind: HarnessKind, mode: PermissionMode): void {
  if (mode !== 'always_allow') {
    throw new ValidationError(`harness ${kind} cannot wait for tool confirmation; use permission mode always_allow`, 'permission_mode');
  }
}
