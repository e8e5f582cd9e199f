import type { ImportOrigin, Usage } from '@berth/contracts';
import type { ConversationState, Lifecycle, SandboxBinding, SessionState, TurnRecoveryPhase, TurnStatus } from '../state';
import { deriveRecoveryFields, type RecoveryFields } from './recovery-fields';

/** Managed Agents session statuses. */
export type PublicStatus = 'idle' | 'running' | 'rescheduling' | 'terminated';

export type StopReason =
  | Readonly<{ type: 'end_turn' }>
  | Readonly<{ type: 'requires_action'; event_ids: readonly string[] }>
  | Readonly<{ type: 'retries_exhausted' }>;

export type SessionView = Readonly<{
  status: PublicStatus;
  /** Why the session is idle; null while it is not idle or before its first turn. */
  stop_reason: StopReason | null;
  lifecycle: Lifecycle;
  archived: boolean;
  /** Paused on request (no sandbox); the next message or `POST …/resume` rebuilds it. */
  paused: boolean;
  conversation: ConversationState;
  runtime_unavailable: boolean;
  recovery: RecoveryFields;
  usage: Usage;
  turn: Readonly<{ id: string; status: TurnStatus; recovery_phase: TurnRecoveryPhase | null; pending_confirmations: readonly string[] }> | null;
  queued_messages: number;
  sandbox: Readonly<Pick<SandboxBinding, 'sandbox_id' | 'generation' | 'expires_at'>> | null;
  permission_mode: SessionState['permission_mode'];
  harness: Readonly<{ kind: SessionState['harness']; session_id: string | null }>;
  resources: SessionState['resources'];
  /** The session and turn this one was forked from; null when it is no fork. */
  forked_from: Readonly<{ session_id: string; turn_id: string; event_id: string | null; seq: number | null }> | null;
  /** The archived session this one was imported from, and its resources the import did not recreate; null when it is no import. */
  imported_from: Readonly<{
    session_id: string;
    agent: Readonly<{ id: string; version: number }>;
    environment_id: string;
    exported_at: string;
    resources_not_carried: ImportOrigin['resources_not_carried'];
  }> | null;
  vault_ids: SessionState['vault_ids'];
}>;

/**
 * The one derivation from session state to what the API shows:
 * - TERMINATED / DELETED → `terminated`;
 * - RECOVERY_REQUIRED → `idle` with `retries_exhausted` (recovery needs a human; `recovery` says why);
 * - a turn waiting for tool confirmations → `idle` with `requires_action` and their event ids;
 * - a turn whose sandbox died and whose transcript is being recovered → `rescheduling`;
 * - any other active turn → `running`;
 * - no turn → `idle`, `end_turn` after a completed (or interrupted) turn, `retries_exhausted` after a failed one.
 */
export function deriveStatus(state: SessionState): Readonly<{ status: PublicStatus; stop_reason: StopReason | null }> {
  if (state.lifecycle === 'TERMINATED' || state.lifecycle === 'DELETED') return { status: 'terminated', stop_reason: null };
  if (state.lifecycle === 'RECOVERY_REQUIRED') return { status: 'idle', stop_reason: { type: 'retries_exhausted' } };
  const turn = state.current_turn;
  if (turn !== null) {
    if (turn.status === 'AWAITING_CONFIRMATION') {
      return { status: 'idle', stop_reason: { type: 'requires_action', event_ids: turn.pending_confirmations } };
    }
    if (turn.recovery_phase === 'TRANSCRIPT_PENDING') return { status: 'rescheduling', stop_reason: null };
    return { status: 'running', stop_reason: null };
  }
  if (state.last_turn === null) return { status: 'idle', stop_reason: null };
  return { status: 'idle', stop_reason: state.last_turn.status === 'FAILED' ? { type: 'retries_exhausted' } : { type: 'end_turn' } };
}

export function deriveSessionView(state: SessionState): SessionView {
  const turn = state.current_turn;
  return {
    ...deriveStatus(state),
    lifecycle: state.lifecycle,
    archived: state.archived,
    paused: state.paused,
    conversation: state.conversation,
    runtime_unavailable: state.runtime_unavailable,
    recovery: deriveRecoveryFields(state.lifecycle, state),
    usage: state.usage,
    turn: turn === null ? null : { id: turn.id, status: turn.status, recovery_phase: turn.recovery_phase, pending_confirmations: turn.pending_confirmations },
    queued_messages: state.queued.length,
    sandbox: state.sandbox && { sandbox_id: state.sandbox.sandbox_id, generation: state.sandbox.generation, expires_at: state.sandbox.expires_at },
    permission_mode: state.permission_mode,
    harness: { kind: state.harness, session_id: state.harness_session_id },
    resources: state.resources,
    forked_from: state.forked_from === null ? null : { session_id: state.forked_from.session_id, turn_id: state.forked_from.turn_id, event_id: state.forked_from.event_id, seq: state.forked_from.seq },
    imported_from:
      state.imported_from === null
        ? null
        : {
            session_id: state.imported_from.session_id,
            agent: state.imported_from.agent,
            environment_id: state.imported_from.environment_id,
            exported_at: state.imported_from.exported_at,
            resources_not_carried: state.imported_from.resources_not_carried,
          },
    vault_ids: state.vault_ids,
  };
}
