import { ErrorCodes, IllegalStateError } from '@berth/core';
import type { SessionCommandOf, SessionEvent } from '@berth/contracts';
import { requireExists, requireTurnEligible, SessionErrorCodes } from '../guards';
import type { SessionState } from '../state';
import { evolve } from '../evolve';
import { resumeIfPaused } from './lifecycle';
import { rebuildIfNeeded, settleTurn, startNextQueued } from './turn-flow';

const knownTurn = (state: SessionState, turnId: string): boolean =>
  state.current_turn?.id === turnId || state.last_turn?.id === turnId || state.queued.some((q) => q.turn_id === turnId);

/**
 * A user message starts a turn when the conversation is idle, otherwise it waits in the queue and
 * starts when the running turn settles. A session without a live sandbox asks for one first.
 */
export function decideSubmitUserMessage(command: SessionCommandOf<'SubmitUserMessage'>, state: SessionState): SessionEvent[] {
  requireExists(state, command.meta.session_id);
  requireTurnEligible(state, { rejectTerminated: true, rejectDeleted: true, rejectCreating: false });
  if (state.archived) throw new IllegalStateError(SessionErrorCodes.SESSION_ARCHIVED, 'the session is archived and takes no new messages');
  if (state.lifecycle === 'RECOVERY_REQUIRED') {
    throw new IllegalStateError(ErrorCodes.AGENT_RUNTIME_ERROR, 'the session needs recovery before it can take messages', {
      recovery_reason: state.recovery_reason,
    });
  }
  const { turn_id, content } = command.data;
  if (knownTurn(state, turn_id)) return [];
  if (state.current_turn !== null) return [{ type: 'UserMessageReceived', data: { turn_id, content, queued: true } }];
  const resumed = resumeIfPaused(state);
  const ready = resumed.reduce<SessionState>(evolve, state);
  if (ready.queued.length > 0) {
    // Messages queued before a pause run first, in order: this one waits behind them.
    const received: SessionEvent = { type: 'UserMessageReceived', data: { turn_id, content, queued: true } };
    return [...resumed, received, ...startNextQueued(evolve(ready, received))];
  }
  return [
    ...resumed,
    ...(ready.lifecycle === 'READY' ? rebuildIfNeeded(ready) : []),
    { type: 'UserMessageReceived', data: { turn_id, content, queued: false } },
    { type: 'TurnStarted', data: { turn_id } },
  ];
}

/**
 * Stops the running turn at the next safe point; it then settles with `end_turn`. A turn with no
 * live harness (its sandbox is gone) has nothing to stop, so it settles at once. No turn: no-op.
 */
export function decideInterruptTurn(command: SessionCommandOf<'InterruptTurn'>, state: SessionState): SessionEvent[] {
  requireExists(state, command.meta.session_id);
  requireTurnEligible(state, { rejectTerminated: false, rejectDeleted: true });
  const turn = state.current_turn;
  if (turn === null || turn.status === 'INTERRUPTING') return [];
  const requested: SessionEvent = { type: 'InterruptRequested', data: { turn_id: turn.id } };
  const harnessGone = state.sandbox === null || state.runtime_unavailable;
  if (!harnessGone) return [requested];
  return [requested, ...settleTurn(state, { type: 'TurnCompleted', data: { turn_id: turn.id, interrupted: true } })];
}

/** Answers one pending tool use; when none is left pending, the turn runs again (a paused session resumes for it). */
export function decideConfirmToolUse(command: SessionCommandOf<'ConfirmToolUse'>, state: SessionState): SessionEvent[] {
  requireExists(state, command.meta.session_id);
  requireTurnEligible(state, { rejectTerminated: true, rejectDeleted: true });
  const { tool_use_id, result, deny_message } = command.data;
  const turn = state.current_turn;
  if (turn !== null && turn.confirmed.includes(tool_use_id)) return [];
  if (turn?.custom_tool_uses.includes(tool_use_id) === true) {
    throw new IllegalStateError(SessionErrorCodes.TOOL_USE_NOT_PENDING, `${tool_use_id} is a custom tool use: answer it with user.custom_tool_result`, { tool_use_id });
  }
  if (turn === null || !turn.pending_confirmations.includes(tool_use_id)) {
    throw new IllegalStateError(SessionErrorCodes.TOOL_USE_NOT_PENDING, `tool use ${tool_use_id} is not waiting for a confirmation`, {
      tool_use_id,
    });
  }
  const confirmed: SessionEvent = { type: 'ToolUseConfirmed', data: { turn_id: turn.id, tool_use_event_id: tool_use_id, result, deny_message } };
  const stillPending = turn.pending_confirmations.filter((id) => id !== tool_use_id);
  // An answer to a paused session brings its sandbox back: the turn continues there.
  const resumed = stillPending.length > 0 ? [] : resumeIfPaused(state);
  return stillPending.length > 0 ? [confirmed] : [...resumed, confirmed, { type: 'TurnResumed', data: { turn_id: turn.id } }];
}

/**
 * The client's result for a custom tool use the turn waits on; when nothing else is pending, the
 * turn runs again (the harness gets the result as the tool's answer). A result for a custom tool
 * use that is unknown, already answered, or of a turn being interrupted is refused: a result is
 * one answer, and a retried request is the same command id, which the kernel deduplicates.
 */
export function decideSubmitCustomToolResult(command: SessionCommandOf<'SubmitCustomToolResult'>, state: SessionState): SessionEvent[] {
  requireExists(state, command.meta.session_id);
  requireTurnEligible(state, { rejectTerminated: true, rejectDeleted: true });
  const { custom_tool_use_id, content, is_error } = command.data;
  const turn = state.current_turn;
  const notPending = (why: 'unknown' | 'answered' | 'interrupted', message: string): never => {
    throw new IllegalStateError(SessionErrorCodes.CUSTOM_TOOL_USE_NOT_PENDING, message, { custom_tool_use_id, reason: why });
  };
  if (turn === null || !turn.custom_tool_uses.includes(custom_tool_use_id)) {
    return notPending('unknown', `${custom_tool_use_id} is not a custom tool use of the running turn`);
  }
  if (!turn.pending_confirmations.includes(custom_tool_use_id)) return notPending('answered', `custom tool use ${custom_tool_use_id} was already answered`);
  if (turn.status === 'INTERRUPTING') return notPending('interrupted', `the turn of custom tool use ${custom_tool_use_id} is being interrupted`);
  const harnessId = Object.entries(turn.tool_use_event_ids).find(([, id]) => id === custom_tool_use_id)?.[0] ?? '';
  const received: SessionEvent = {
    type: 'CustomToolResultReceived',
    data: { turn_id: turn.id, custom_tool_use_event_id: custom_tool_use_id, harness_tool_use_id: harnessId, content, is_error },
  };
  const stillPending = turn.pending_confirmations.filter((id) => id !== custom_tool_use_id);
  return stillPending.length > 0 ? [received] : [received, { type: 'TurnResumed', data: { turn_id: turn.id } }];
}
