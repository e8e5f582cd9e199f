import type { EventData, SandboxProbe, SessionCommandOf, SessionEvent } from '@berth/contracts';
import { requireExists, requireTurnEligible } from '../guards';
import { turnNeedsRecovery, type RecoveryOutcome, type SessionState } from '../state';
import { loseSandbox } from './sandbox';

export type RecoveryReason = EventData<'SessionRecovered'>['reason'];

export type RecoveryPlan = Readonly<{
  outcome: RecoveryOutcome;
  reason: RecoveryReason;
  /** A sandbox start is already under way: nothing to add. */
  inProgress: boolean;
}>;

/**
 * Reattach or recreate, from the sandbox facts the caller probed:
 * - a bound sandbox that runs and is not expired is reattached (unless its expiry cannot be read:
 *   then a human decides, `sandbox_expiry_unavailable`);
 * - otherwise a new sandbox is requested (`recreated` for a TERMINATED session, which comes back
 *   READY, `startup-requested` otherwise) — unless an active turn needs its transcript and the
 *   harness has no session id to resume from: then recovery is manual (`sandbox_missing` /
 *   `sandbox_expired`), because a fresh sandbox would silently lose that turn.
 */
export function planRecovery(state: SessionState, probe: SandboxProbe): RecoveryPlan {
  // A sandbox start (startup, rebuild or an earlier recover) is already on its way.
  if (state.sandbox_request !== null && state.sandbox === null) {
    return { outcome: state.lifecycle === 'TERMINATED' ? 'recreated' : 'startup-requested', reason: null, inProgress: true };
  }
  const bound = state.sandbox !== null && !state.runtime_unavailable && state.lifecycle !== 'TERMINATED';
  if (bound && probe.exists && probe.running && !probe.expired) {
    if (!probe.expiry_known) return { outcome: 'manual-recovery-required', reason: 'sandbox_expiry_unavailable', inProgress: false };
    return { outcome: 'reattached', reason: null, inProgress: false };
  }
  const turnLosesItsSandbox = state.current_turn !== null && (turnNeedsRecovery(state) || bound);
  if (turnLosesItsSandbox && state.harness_session_id === null) {
    return { outcome: 'manual-recovery-required', reason: probe.expired ? 'sandbox_expired' : 'sandbox_missing', inProgress: false };
  }
  return { outcome: state.lifecycle === 'TERMINATED' ? 'recreated' : 'startup-requested', reason: null, inProgress: false };
}

/** Explicit recovery. Accepts TERMINATED (it comes back READY), refuses DELETED. */
export function decideRecoverSession(command: SessionCommandOf<'RecoverSession'>, state: SessionState): SessionEvent[] {
  requireExists(state, command.meta.session_id);
  requireTurnEligible(state, { rejectTerminated: false, rejectDeleted: true });
  // A paused session has no sandbox by choice: nothing to recover (resume brings it back).
  if (state.paused) return [];
  const { probe } = command.data;
  const plan = planRecovery(state, probe);
  if (plan.inProgress) return [];
  const bound = state.sandbox;
  const sandboxGone = bound !== null && plan.outcome !== 'reattached' && plan.reason !== 'sandbox_expiry_unavailable';
  const lost = sandboxGone ? loseSandbox(state, bound.sandbox_id, bound.generation, probe.expired ? 'expired' : probe.exists ? 'die' : 'missing') : [];
  const recovered: SessionEvent = {
    type: 'SessionRecovered',
    data: { outcome: plan.outcome, reason: plan.reason, policy: plan.outcome === 'manual-recovery-required' ? state.recovery_policy : null },
  };
  const startup: SessionEvent[] =
    plan.outcome === 'startup-requested' || plan.outcome === 'recreated'
      ? [{ type: 'SandboxRequested', data: { generation: state.last_generation + 1, reason: 'recover' } }]
      : [];
  return [...lost, recovered, ...startup];
}
