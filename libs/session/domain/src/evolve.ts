import { FORK_POINT_HISTORY, LEASE_ACTIVITY_EVENTS, leaseExpiryAfter, type SessionEvent } from '@berth/contracts';
import type { CurrentTurn, ForkPoint, SandboxBinding, SessionState } from './state';

/**
 * Folds one event into the state. Total: an event that does not fit the state (e.g. a turn event
 * for another turn) leaves the state as it was, so replaying any journal never throws.
 * Recorded events carry `id` and `occurred_at`; when present they stamp the tool-use id map and the
 * timestamps.
 */
export function evolve(state: SessionState, event: SessionEvent): SessionState {
  const next = apply(state, event);
  const at = 'occurred_at' in event && typeof event.occurred_at === 'string' ? event.occurred_at : null;
  if (at === null) return next;
  const archived_at = event.type === 'SessionArchived' && state.archived_at === null ? at : next.archived_at;
  return { ...next, created_at: next.created_at ?? at, updated_at: at, archived_at, sandbox: leaseAfter(next.sandbox, event, at) };
}

/** The bound sandbox after `event` at `at`: a turn starting or ending restarts a lease with terms. */
const leaseAfter = (binding: SandboxBinding | null, event: SessionEvent, at: string): SandboxBinding | null =>
  binding?.lease == null || !LEASE_ACTIVITY_EVENTS.has(event.type) ? binding : { ...binding, expires_at: leaseExpiryAfter(binding.lease, at) };

const eventIdOf = (event: SessionEvent): string | null => ('id' in event && typeof event.id === 'string' ? event.id : null);
const seqOf = (event: SessionEvent): number | null => ('seq' in event && typeof event.seq === 'number' ? event.seq : null);

/** The turn becomes a fork point (once: a checkpoint recorded it already); its message is no longer pending. */
function settledForkPoint(state: SessionState, turnId: string, status: ForkPoint['status'], checkpoint: ForkPoint['checkpoint']): SessionState {
  const { [turnId]: message, ...turn_messages } = state.turn_messages;
  if (state.fork_points.some((p) => p.turn_id === turnId)) return { ...state, turn_messages };
  const point: ForkPoint = { turn_id: turnId, message: message ?? null, status, harness_session_id: state.harness_session_id, checkpoint };
  return { ...state, turn_messages, fork_points: [...state.fork_points, point].slice(-FORK_POINT_HISTORY) };
}

function onTurn(state: SessionState, turnId: string, change: (turn: CurrentTurn) => CurrentTurn): SessionState {
  const turn = state.current_turn;
  if (turn === null || turn.id !== turnId) return state;
  return { ...state, current_turn: change(turn) };
}

/** Agent output for the current turn: advances the offset watermark and marks delivery. */
const recordOutput = (state: SessionState, turnId: string, offset: number, extra: Partial<CurrentTurn> = {}): SessionState =>
  onTurn(state, turnId, (t) => ({ ...t, ...extra, last_offset: Math.max(t.last_offset, offset), delivery: 'RECEIVED' }));

function apply(state: SessionState, event: SessionEvent): SessionState {
  switch (event.type) {
    case 'SessionCreated': {
      const d = event.data;
      return {
        ...state,
        exists: true,
        owner_id: d.owner_id,
        agent: d.agent,
        environment_id: d.environment_id,
        harness: d.harness,
        title: d.title,
        metadata: d.metadata,
        idempotency_key: d.idempotency_key,
        permission_mode: d.permission_mode,
        vault_ids: d.vault_ids ?? [],
        lifecycle: 'CREATING',
      };
    }
    case 'SessionUpdated': {
      const metadata: Record<string, string> = { ...state.metadata };
      for (const [key, value] of Object.entries(event.data.metadata ?? {})) {
        if (value === null) delete metadata[key];
        else metadata[key] = value;
      }
      return { ...state, title: event.data.title === undefined ? state.title : event.data.title, metadata };
    }
    case 'UserMessageReceived': {
      const id = eventIdOf(event);
      const seq = seqOf(event);
      const next = id === null || seq === null ? state : { ...state, turn_messages: { ...state.turn_messages, [event.data.turn_id]: { event_id: id, seq } } };
      return event.data.queued ? { ...next, queued: [...next.queued, { turn_id: event.data.turn_id, content: event.data.content }] } : next;
    }
    case 'TurnStarted':
      return {
        ...state,
        conversation: 'RUNNING',
        conversation_ended: false,
        queued: state.queued.filter((q) => q.turn_id !== event.data.turn_id),
        current_turn: {
          id: event.data.turn_id,
          status: 'RUNNING',
          recovery_phase: null,
          delivery: 'NOT_RECEIVED',
          last_offset: -1,
          pending_confirmations: [],
          confirmed: [],
          custom_tool_uses: [],
          tool_use_event_ids: {},
          harness_released: false,
        },
      };
    case 'AgentMessageRecorded':
    case 'AgentThinkingRecorded':
    case 'AgentToolResultRecorded':
    case 'AgentMcpToolResultRecorded':
      return recordOutput(state, event.data.turn_id, event.data.offset);
    case 'AgentToolUseRecorded':
    case 'AgentMcpToolUseRecorded': {
      const id = eventIdOf(event);
      const turn = state.current_turn;
      if (turn === null || turn.id !== event.data.turn_id) return state;
      const ids = id === null ? turn.tool_use_event_ids : { ...turn.tool_use_event_ids, [event.data.harness_tool_use_id]: id };
      return recordOutput(state, event.data.turn_id, event.data.offset, { tool_use_event_ids: ids });
    }
    case 'AgentCustomToolUseRecorded': {
      const id = eventIdOf(event);
      const turn = state.current_turn;
      if (turn === null || turn.id !== event.data.turn_id || id === null) return recordOutput(state, event.data.turn_id, event.data.offset);
      return recordOutput(state, event.data.turn_id, event.data.offset, {
        tool_use_event_ids: { ...turn.tool_use_event_ids, [event.data.harness_tool_use_id]: id },
        custom_tool_uses: [...turn.custom_tool_uses, id],
      });
    }
    case 'CustomToolResultReceived':
      return onTurn(state, event.data.turn_id, (t) => ({ ...t, pending_confirmations: t.pending_confirmations.filter((id) => id !== event.data.custom_tool_use_event_id) }));
    case 'UsageRecorded':
      return { ...recordOutput(state, event.data.turn_id, event.data.offset), usage: event.data.usage };
    case 'HarnessSessionRecorded':
      return { ...state, harness_session_id: event.data.harness_session_id };
    case 'TurnAwaitingConfirmation': {
      const next = onTurn(state, event.data.turn_id, (t) => ({ ...t, status: 'AWAITING_CONFIRMATION', pending_confirmations: event.data.event_ids }));
      return next === state ? state : { ...next, conversation: 'WAITING_INPUT' };
    }
    case 'ToolUseConfirmed':
      return onTurn(state, event.data.turn_id, (t) => ({
        ...t,
        pending_confirmations: t.pending_confirmations.filter((id) => id !== event.data.tool_use_event_id),
        confirmed: [...t.confirmed, event.data.tool_use_event_id],
      }));
    case 'TurnResumed': {
      // A released harness's turn goes on in a new harness (the sandbox-manager's view agrees).
      const next = onTurn(state, event.data.turn_id, (t) => ({ ...t, status: 'RUNNING', pending_confirmations: [], harness_released: false }));
      return next === state ? state : { ...next, conversation: 'RUNNING' };
    }
    case 'InterruptRequested': {
      if (event.data.turn_id === null) return state;
      const next = onTurn(state, event.data.turn_id, (t) => ({ ...t, status: 'INTERRUPTING' }));
      return next === state ? state : { ...next, conversation: 'INTERRUPTING' };
    }
    case 'TurnCheckpointed': {
      if (state.current_turn?.id !== event.data.turn_id) return state;
      const dropped = new Set(event.data.dropped_turn_ids);
      const kept = { ...state, fork_points: state.fork_points.map((p) => (p.checkpoint !== null && dropped.has(p.turn_id) ? { ...p, checkpoint: { ...p.checkpoint, workspace: null } } : p)) };
      const unsupported = event.data.workspace_unsupported === true ? { workspace_unsupported: true as const } : {};
      return settledForkPoint(kept, event.data.turn_id, 'COMPLETED', { transcript: event.data.transcript, workspace: event.data.workspace, ...unsupported });
    }
    case 'TurnCompleted':
    case 'TurnFailed': {
      if (state.current_turn?.id !== event.data.turn_id) return state;
      const failed = event.type === 'TurnFailed';
      return {
        ...settledForkPoint(state, event.data.turn_id, failed ? 'FAILED' : 'COMPLETED', null),
        conversation: 'IDLE',
        current_turn: null,
        last_turn: {
          id: event.data.turn_id,
          status: failed ? 'FAILED' : 'COMPLETED',
          failure_reason: failed ? event.data.reason : null,
          interrupted: !failed && event.data.interrupted,
        },
      };
    }
    case 'TurnTranscriptPending':
      return onTurn(state, event.data.turn_id, (t) => ({ ...t, recovery_phase: 'TRANSCRIPT_PENDING' }));
    case 'TurnRecovered':
      return onTurn(state, event.data.turn_id, (t) => ({ ...t, recovery_phase: null }));
    case 'SandboxRequested':
      return {
        ...state,
        sandbox_request: { generation: event.data.generation, reason: event.data.reason },
        last_generation: Math.max(state.last_generation, event.data.generation),
      };
    case 'SandboxBound':
      return {
        ...state,
        lifecycle: state.lifecycle === 'CREATING' ? 'READY' : state.lifecycle,
        sandbox: { sandbox_id: event.data.sandbox_id, generation: event.data.generation, expires_at: event.data.expires_at, lease: event.data.lease ?? null },
        sandbox_request: null,
        runtime_unavailable: false,
      };
    case 'SandboxStartFailed':
      return {
        ...state,
        lifecycle: state.lifecycle === 'CREATING' ? 'READY' : state.lifecycle,
        sandbox_request: state.sandbox_request?.generation === event.data.generation ? null : state.sandbox_request,
        runtime_unavailable: state.sandbox === null ? true : state.runtime_unavailable,
      };
    case 'SandboxLost':
      return state.sandbox?.sandbox_id === event.data.sandbox_id && state.sandbox.generation === event.data.generation
        ? { ...state, sandbox: null, runtime_unavailable: true }
        : state;
    case 'SessionRecovered': {
      const { outcome } = event.data;
      if (outcome === 'manual-recovery-required') {
        return {
          ...state,
          lifecycle: 'RECOVERY_REQUIRED',
          recovery_policy: event.data.policy ?? state.recovery_policy,
          recovery_reason: event.data.reason,
          last_recovery: outcome,
        };
      }
      const rebuilding = outcome !== 'reattached';
      return {
        ...state,
        lifecycle: 'READY',
        recovery_reason: null,
        last_recovery: outcome,
        runtime_unavailable: rebuilding ? true : state.runtime_unavailable,
        sandbox: rebuilding ? null : state.sandbox,
      };
    }
    case 'SessionTerminated':
      return { ...released(state), lifecycle: 'TERMINATED', paused: false };
    case 'SessionPaused':
      return {
        ...state,
        paused: true,
        pause_requested: false,
        current_turn: state.current_turn !== null && state.current_turn.id === event.data.turn_id ? { ...state.current_turn, harness_released: true } : state.current_turn,
        sandbox: null,
        sandbox_request: null,
        runtime_unavailable: true,
      };
    case 'PauseRequested':
      return state.current_turn?.id === event.data.turn_id ? { ...state, pause_requested: true } : state;
    case 'SessionResumed':
      return { ...state, paused: false, pause_requested: false };
    case 'ConversationEnded':
      return {
        ...state,
        harness_session_id: null,
        conversation_ended: true,
        lifecycle: state.lifecycle === 'RECOVERY_REQUIRED' ? 'READY' : state.lifecycle,
        recovery_reason: null,
      };
    case 'SessionArchived':
      return { ...released(state), archived: true };
    case 'ForkCreated':
      return state;
    case 'SessionForked':
      return { ...state, forked_from: event.data.from, harness_session_id: event.data.from.harness_session_id };
    case 'SessionImported':
      return { ...state, imported_from: event.data.from, harness_session_id: event.data.from.harness_session_id };
    case 'SessionDeleted':
      return { ...released(state), lifecycle: 'DELETED', paused: false };
    case 'PermissionModeSet':
      return { ...state, permission_mode: event.data.mode };
    case 'SessionErrorRaised':
    case 'EgressDenied':
      return state;
    case 'SessionResourceAdded':
      return { ...state, resources: [...state.resources.filter((r) => r.id !== event.data.resource.id), event.data.resource] };
    case 'SessionResourceRemoved':
      return { ...state, resources: state.resources.filter((r) => r.id !== event.data.resource_id) };
  }
}

/** The sandbox is given back and nothing waits to run: what terminate, archive and delete share. */
const released = (state: SessionState): SessionState => ({
  ...state,
  sandbox: null,
  sandbox_request: null,
  runtime_unavailable: true,
  queued: [],
  turn_messages: {},
  current_turn: null,
  conversation: 'IDLE',
  pause_requested: false,
});
