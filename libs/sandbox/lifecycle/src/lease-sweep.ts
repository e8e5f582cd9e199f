import type { Clock } from '@berth/core';
import { isLeaseExpired } from '@berth/sandbox-domain';
import type { BoundSandbox, SandboxBindings } from './sandbox-bindings';

/**
 * One tick of the lease sweep: every bound sandbox whose lease is past (by the seed's
 * conservative predicate) is reported; the manager turns that into `ReportSandboxExpired`.
 * One failing report does not stop the others.
 */
export async function sweepExpiredLeases(input: {
  bindings: SandboxBindings;
  clock: Clock;
  onExpired: (binding: BoundSandbox) => Promise<void> | void;
  onError?: (error: unknown, binding: BoundSandbox) => void;
}): Promise<readonly BoundSandbox[]> {
  const now = input.clock.now();
  const expired = (await input.bindings.listBound()).filter((b) => isLeaseExpired(b, now));
  for (const binding of expired) {
    try {
      await input.onExpired(binding);
    } catch (error) {
      input.onError?.(error, binding);
    }
  }
  return expired;
}
