import type { SessionEvent } from '@berth/contracts';
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

/** After a turn settles: start the next queued message, if the session can still run turns. */
export function startNextQueued(state: SessionState): SessionEvent[] {
  const next = state.queued[0];
  if (next === undefined || (state.lifecycle !== 'READY' && state.lifecycle !== 'CREATING') || state.archived) return [];
  return [...rebuildIfNeeded(state), { type: 'TurnStarted', data: { turn_id: next.turn_id } }];
}

/** Events that settle the current turn, then whatever the queue starts next. */
export function settleTurn(state: SessionState, settle: SessionEvent): SessionEvent[] {
  return [settle, ...startNextQueued(evolve(state, settle))];
}

/** Destructive lifecycle commands take the sandbox away: an active turn cannot finish, so it fails. */
export function failActiveTurn(state: SessionState, message: string): SessionEvent[] {
  if (state.current_turn === null) return [];
  return [{ type: 'TurnFailed', data: { turn_id: state.current_turn.id, reason: 'sandbox_lost', message } }];
}
