import type { Lifecycle } from '../state';

export type RecoveryFields = Readonly<{ policy: string | null; reason: string | null }>;

export type RecoveryFacts = Readonly<{ recovery_policy?: string | null; recovery_reason?: string | null; runtime_unavailable?: boolean }>;

/**
 * The recovery posture a client sees. Only RECOVERY_REQUIRED reports one; a reason the recover pass
 * persisted wins; otherwise the fallback vocabulary: `runtime_detached` when the runtime is gone,
 * else `session_recovery_required`. The policy defaults to `auto`.
 */
export function deriveRecoveryFields(lifecycle: Lifecycle | string, facts: RecoveryFacts): RecoveryFields {
  if (lifecycle !== 'RECOVERY_REQUIRED') return { policy: null, reason: null };
  const policy = facts.recovery_policy || 'auto';
  if (facts.recovery_reason) return { policy, reason: facts.recovery_reason };
  return { policy, reason: facts.runtime_unavailable ? 'runtime_detached' : 'session_recovery_required' };
}
