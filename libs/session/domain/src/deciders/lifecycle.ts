import { ErrorCodes, IllegalStateError } from '@berth/core';
import type { SessionCommandOf, SessionEvent } from '@berth/contracts';
import { requireExists, requireTurnEligible, SessionErrorCodes } from '../guards';
import type { SessionState } from '../state';
import { resourcesAdded } from './resources';
import { evolve } from '../evolve';
import { failActiveTurn, pausedNow, startNextQueued, waitsForConfirmation } from './turn-flow';

/**
 * Create is idempotent on (owner, agent, idempotency key): the session id is derived from the key,
 * so a retried create lands on the session it already made and changes nothing.
 */
export function decideCreateSession(command: SessionCommandOf<'CreateSession'>, state: SessionState): SessionEvent[] {
  const d = command.data;
  if (state.exists) {
    const same = state.owner_id === d.owner_id && state.agent.id === d.agent.id && d.idempotency_key !== null && state.idempotency_key === d.idempotency_key;
    if (!same) {
      throw new IllegalStateError(ErrorCodes.IDEMPOTENCY_KEY_CONFLICT, 'this idempotency key was already used for another request', {
        session_id: command.meta.session_id,
      });
    }
    if (state.lifecycle === 'DELETED') {
      throw new IllegalStateError(SessionErrorCodes.IDEMPOTENCY_KEY_RETIRED, 'the session this idempotency key created was deleted');
    }
    return [];
  }
  return [
    {
      type: 'SessionCreated',
      data: {
        owner_id: d.owner_id,
        agent: d.agent,
        environment_id: d.environment_id,
        harness: d.harness,
        title: d.title,
        metadata: d.metadata,
        idempotency_key: d.idempotency_key,
        permission_mode: d.permission_mode,
        ...(d.vault_ids !== undefined && d.vault_ids.length > 0 ? { vault_ids: d.vault_ids } : {}),
      },
    },
    ...resourcesAdded(d.resources ?? []),
    ...(d.fork !== undefined ? [{ type: 'SessionForked', data: { from: d.fork } } as const] : []),
    ...(d.import !== undefined ? [{ type: 'SessionImported', data: { from: d.import } } as const] : []),
    { type: 'SandboxRequested', data: { generation: 1, reason: 'startup' } },
  ];
}

/** Only the fields that actually change are recorded; an update that changes nothing is a no-op. */
export function decideUpdateSession(command: SessionCommandOf<'UpdateSession'>, state: SessionState): SessionEvent[] {
  requireExists(state, command.meta.session_id);
  requireTurnEligible(state, { rejectTerminated: false });
  const { title, metadata } = command.data;
  const changedTitle = title !== undefined && title !== state.title;
  const changedMetadata = Object.entries(metadata ?? {}).filter(([key, value]) =>
    value === null ? Object.hasOwn(state.metadata, key) : state.metadata[key] !== value,
  );
  if (!changedTitle && changedMetadata.length === 0) return [];
  return [
    {
      type: 'SessionUpdated',
      data: {
        ...(changedTitle ? { title } : {}),
        ...(changedMetadata.length > 0 ? { metadata: Object.fromEntries(changedMetadata) } : {}),
      },
    },
  ];
}

/** Releases the sandbox. Accepts a TERMINATED session (the outcome is idempotent), refuses DELETED. */
export function decideTerminateSession(command: SessionCommandOf<'TerminateSession'>, state: SessionState): SessionEvent[] {
  requireExists(state, command.meta.session_id);
  requireTurnEligible(state, { rejectTerminated: false });
  if (state.lifecycle === 'TERMINATED') return [];
  return [
    ...failActiveTurn(state, 'the session was terminated'),
    { type: 'SessionTerminated', data: { sandbox_id: state.sandbox?.sandbox_id ?? null } },
  ];
}

/**
 * Releases the sandbox and keeps the workspace, transcript, conversation, queued messages and the
 * tool confirmations a turn waits for. An idle session, or one whose turn waits for confirmations,
 * pauses at once (the waiting turn stays open: its harness process goes with the sandbox, and the
 * answer continues the turn in the next one). A running turn is never cut: the pause is requested
 * and happens when the turn ends or starts waiting for a confirmation. A sandbox still starting is
 * given up (its late bind is fenced off). Pausing a paused session (or asking again) is a no-op.
 */
export function decidePauseSession(command: SessionCommandOf<'PauseSession'>, state: SessionState): SessionEvent[] {
  requireExists(state, command.meta.session_id);
  requireTurnEligible(state, { rejectTerminated: true, rejectDeleted: true });
  if (state.paused || state.pause_requested) return [];
  if (state.lifecycle === 'RECOVERY_REQUIRED') throw new IllegalStateError(ErrorCodes.SESSION_BUSY, 'the session needs recovery; recover it before pausing');
  const turn = state.current_turn;
  // A custom tool call keeps its harness (its result goes to that call): the pause waits for the turn's end.
  const waitsOnCustomTool = turn !== null && turn.pending_confirmations.some((id) => turn.custom_tool_uses.includes(id));
  if (turn !== null && (!waitsForConfirmation(state) || waitsOnCustomTool)) return [{ type: 'PauseRequested', data: { turn_id: turn.id } }];
  return [pausedNow(state)];
}

/**
 * Brings a paused session back: a new sandbox at the next generation, and the first queued message
 * starts when no turn is open. A pause still waiting for its turn to end is called off. Otherwise a no-op.
 */
export function decideResumeSession(command: SessionCommandOf<'ResumeSession'>, state: SessionState): SessionEvent[] {
  requireExists(state, command.meta.session_id);
  requireTurnEligible(state, { rejectTerminated: true, rejectDeleted: true });
  if (!state.paused && state.pause_requested) return [{ type: 'SessionResumed', data: {} }];
  const resumed = resumeIfPaused(state);
  if (resumed.length === 0) return [];
  const ready = resumed.reduce<SessionState>(evolve, state);
  return [...resumed, ...(ready.current_turn === null ? startNextQueued(ready) : [])];
}

/** The events that end a pause (none when not paused); a message or a confirmation to a paused session starts with them. */
export function resumeIfPaused(state: SessionState): SessionEvent[] {
  if (!state.paused) return [];
  return [
    { type: 'SessionResumed', data: {} },
    { type: 'SandboxRequested', data: { generation: state.last_generation + 1, reason: 'rebuild' } },
  ];
}

/**
 * Ends the harness conversation: the next turn starts a fresh one instead of resuming. Refused while
 * a turn is active (interrupt it first), like every command that takes the conversation offline.
 */
export function decideEndConversation(command: SessionCommandOf<'EndConversation'>, state: SessionState): SessionEvent[] {
  requireExists(state, command.meta.session_id);
  requireTurnEligible(state, { rejectTerminated: false });
  if (state.current_turn !== null) {
    throw new IllegalStateError(ErrorCodes.SESSION_BUSY, 'a turn is active; interrupt it before ending the conversation', {
      turn_id: state.current_turn.id,
    });
  }
  if (state.conversation_ended) return [];
  return [{ type: 'ConversationEnded', data: {} }];
}

/** Archive refuses TERMINATED and DELETED sessions (the seed pins both); archiving twice is a no-op. */
export function decideArchiveSession(command: SessionCommandOf<'ArchiveSession'>, state: SessionState): SessionEvent[] {
  requireExists(state, command.meta.session_id);
  requireTurnEligible(state, { rejectTerminated: true, rejectDeleted: true });
  if (state.archived) return [];
  return [...failActiveTurn(state, 'the session was archived'), { type: 'SessionArchived', data: {} }];
}

/** Delete accepts any state; deleting a DELETED session is a well-formed no-op. */
export function decideDeleteSession(command: SessionCommandOf<'DeleteSession'>, state: SessionState): SessionEvent[] {
  requireExists(state, command.meta.session_id);
  requireTurnEligible(state, { rejectTerminated: false, rejectDeleted: false });
  if (state.lifecycle === 'DELETED') return [];
  return [...failActiveTurn(state, 'the session was deleted'), { type: 'SessionDeleted', data: {} }];
}

/** Recorded even without a runtime; refused while CREATING, TERMINATED or DELETED. */
export function decideSetPermissionMode(command: SessionCommandOf<'SetPermissionMode'>, state: SessionState): SessionEvent[] {
  requireExists(state, command.meta.session_id);
  requireTurnEligible(state, { rejectTerminated: true, rejectDeleted: true, rejectCreating: true });
  if (state.permission_mode === command.data.mode) return [];
  return [{ type: 'PermissionModeSet', data: { mode: command.data.mode } }];
}

/** An error the user should see. Nobody can read a DELETED session, so there it is dropped. */
export function decideRaiseSessionError(command: SessionCommandOf<'RaiseSessionError'>, state: SessionState): SessionEvent[] {
  requireExists(state, command.meta.session_id);
  if (state.lifecycle === 'DELETED') return [];
  return [
    {
      type: 'SessionErrorRaised',
      data: { turn_id: state.current_turn?.id ?? null, error_type: command.data.error_type, message: command.data.message, retry_status: command.data.retry_status },
    },
  ];
}
