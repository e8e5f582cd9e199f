import type { SessionEvent, TurnFailureReason } from '@berth/contracts';
import { evolve } from '../evolve';
import type { SessionState } from '../state';

/**
 * A sandbox request when the session has no live sandbox and none is on its way: the next turn
 * needs one. Sandbox death never ends a conversation; the next message rebuilds.
 */
export function rebuildIfNeeded(state: SessionState): SessionEvent[] {
  const live = state.sandbox !== null && !state.runtime_unavailable;
  if (live || state.sandbox_request !== null) return [];
  return [{ type: 'SandboxRequested', data: { generation: state.last_generation + 1, reason: 'rebuild' } }];
}

export const waitsForConfirmation = (state: SessionState): boolean =>
  state.current_turn?.status === 'AWAITING_CONFIRMATION' && state.current_turn.recovery_phase === null;

/** The pause itself: the bound sandbox goes, a turn waiting for confirmations is named (it stays open). */
export function pausedNow(state: SessionState): SessionEvent {
  return { type: 'SessionPaused', data: { sandbox_id: state.sandbox?.sandbox_id ?? null, turn_id: waitsForConfirmation(state) ? (state.current_turn?.id ?? null) : null } };
}

/**
 * After a turn settles: start the next queued message, if the session can still run turns. A pause
 * requested during the turn happens now instead; a paused session keeps its queue for the resume.
 */
export function startNextQueued(state: SessionState): SessionEvent[] {
  if (state.pause_requested) return [pausedNow(state)];
  if (state.paused) return [];
  const next = state.queued[0];
  if (next === undefined || (state.lifecycle !== 'READY' && state.lifecycle !== 'CREATING') || state.archived) return [];
  return [...rebuildIfNeeded(state), { type: 'TurnStarted', data: { turn_id: next.turn_id } }];
}

/** Events that settle the current turn, then whatever the queue starts next. */
export function settleTurn(state: SessionState, settle: SessionEvent): SessionEvent[] {
  return [settle, ...startNextQueued(evolve(state, settle))];
}

/** Managed Agents error types for the named failure reasons clients can switch on. */
const ERROR_TYPE_OF: Readonly<Record<TurnFailureReason, string>> = {
  model_error: 'model_request_failed_error',
  harness_failed: 'berth.harness_failed_error',
  sandbox_lost: 'berth.sandbox_lost_error',
  sandbox_start_failed: 'berth.sandbox_start_failed_error',
  input_not_delivered: 'berth.input_not_delivered_error',
  no_progress: 'berth.no_progress_error',
  transcript_unrecoverable: 'berth.transcript_unrecoverable_error',
  dead_lettered: 'unknown_error',
  resource_unavailable: 'berth.resource_unavailable_error',
  workspace_full: 'berth.workspace_full_error',
};

/**
 * A turn that cannot finish, reported as Managed Agents clients expect: a `session.error` that says
 * why (errors never appear as a status), then the idle event that settles the turn.
 */
export function failTurn(state: SessionState, turn_id: string, reason: TurnFailureReason, message: string): SessionEvent[] {
  const error: SessionEvent = { type: 'SessionErrorRaised', data: { turn_id, error_type: ERROR_TYPE_OF[reason], message, retry_status: 'terminal' } };
  return [error, ...settleTurn(evolve(state, error), { type: 'TurnFailed', data: { turn_id, reason, message } })];
}

/** Destructive lifecycle commands take the sandbox away: an active turn cannot finish, so it fails. */
export function failActiveTurn(state: SessionState, message: string): SessionEvent[] {
  if (state.current_turn === null) return [];
  return [{ type: 'TurnFailed', data: { turn_id: state.current_turn.id, reason: 'sandbox_lost', message } }];
}
