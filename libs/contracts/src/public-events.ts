import type { EventType, RecordedEvent } from './events';

/**
 * A session event as the Managed Agents API renders it: `id`, `type`, `processed_at`, then the
 * type's own fields. Berth's own events use the `berth.` prefix so they never collide.
 */
export type PublicEvent = Readonly<{ id: string; type: string; processed_at: string } & Record<string, unknown>>;

/** The public type each domain event renders as (one domain event → one public event). */
export const PUBLIC_EVENT_TYPES: Readonly<Record<EventType, string>> = {
  SessionCreated: 'berth.session_created',
  SessionUpdated: 'session.updated',
  SessionResourceAdded: 'berth.session_resource_added',
  SessionResourceRemoved: 'berth.session_resource_removed',
  UserMessageReceived: 'user.message',
  TurnStarted: 'session.status_running',
  AgentMessageRecorded: 'agent.message',
  AgentThinkingRecorded: 'agent.thinking',
  AgentToolUseRecorded: 'agent.tool_use',
  AgentToolResultRecorded: 'agent.tool_result',
  AgentMcpToolUseRecorded: 'agent.mcp_tool_use',
  AgentMcpToolResultRecorded: 'agent.mcp_tool_result',
  AgentCustomToolUseRecorded: 'agent.custom_tool_use',
  CustomToolResultReceived: 'user.custom_tool_result',
  UsageRecorded: 'session.usage',
  HarnessSessionRecorded: 'berth.harness_session',
  TurnAwaitingConfirmation: 'session.status_idle',
  ToolUseConfirmed: 'user.tool_confirmation',
  TurnResumed: 'session.status_running',
  InterruptRequested: 'user.interrupt',
  TurnCheckpointed: 'berth.turn_checkpointed',
  TurnCompleted: 'session.status_idle',
  TurnFailed: 'session.status_idle',
  TurnTranscriptPending: 'berth.turn_transcript_pending',
  TurnRecovered: 'berth.turn_recovered',
  SandboxRequested: 'berth.sandbox_requested',
  SandboxBound: 'berth.sandbox_bound',
  SandboxStartFailed: 'berth.sandbox_start_failed',
  SandboxLost: 'berth.sandbox_lost',
  SessionRecovered: 'berth.session_recovered',
  SessionTerminated: 'session.status_terminated',
  ConversationEnded: 'berth.conversation_ended',
  SessionPaused: 'berth.lifecycle',
  PauseRequested: 'berth.lifecycle',
  SessionResumed: 'berth.lifecycle',
  ForkCreated: 'berth.fork_created',
  SessionForked: 'berth.session_forked',
  SessionImported: 'berth.session_imported',
  SessionArchived: 'berth.session_archived',
  SessionDeleted: 'session.deleted',
  PermissionModeSet: 'berth.permission_mode_set',
  SessionErrorRaised: 'session.error',
  EgressDenied: 'berth.egress_denied',
};

export const publicTypesToDomain = (publicType: string): EventType[] =>
  (Object.keys(PUBLIC_EVENT_TYPES) as EventType[]).filter((t) => PUBLIC_EVENT_TYPES[t] === publicType);

/** Renders a recorded event for the API and the SSE stream. Pure. */
export function toPublicEvent(event: RecordedEvent): PublicEvent {
  const head = { id: event.id, type: PUBLIC_EVENT_TYPES[event.type], processed_at: event.occurred_at };
  switch (event.type) {
    case 'UserMessageReceived':
      return { ...head, content: event.data.content };
    case 'AgentMessageRecorded':
      return { ...head, content: event.data.content };
    case 'AgentThinkingRecorded':
      return head;
    case 'AgentToolUseRecorded':
      return { ...head, name: event.data.name, input: event.data.input, evaluated_permission: event.data.evaluated_permission };
    case 'AgentToolResultRecorded':
      return { ...head, tool_use_id: event.data.tool_use_event_id, content: event.data.content, is_error: event.data.is_error };
    case 'AgentMcpToolUseRecorded':
      return { ...head, mcp_server_name: event.data.mcp_server_name, name: event.data.name, input: event.data.input, evaluated_permission: event.data.evaluated_permission };
    case 'AgentMcpToolResultRecorded':
      return { ...head, mcp_tool_use_id: event.data.mcp_tool_use_event_id, content: event.data.content, is_error: event.data.is_error };
    case 'AgentCustomToolUseRecorded':
      return { ...head, name: event.data.name, input: event.data.input };
    case 'CustomToolResultReceived':
      return { ...head, custom_tool_use_id: event.data.custom_tool_use_event_id, content: event.data.content, is_error: event.data.is_error };
    case 'UsageRecorded':
      return { ...head, usage: event.data.usage };
    case 'TurnStarted':
    case 'TurnResumed':
      return head;
    case 'TurnAwaitingConfirmation':
      return { ...head, stop_reason: { type: 'requires_action', event_ids: event.data.event_ids } };
    case 'TurnCompleted':
      return { ...head, stop_reason: { type: 'end_turn' } };
    case 'TurnFailed':
      return { ...head, stop_reason: { type: 'retries_exhausted' }, berth_failure: { reason: event.data.reason, message: event.data.message } };
    case 'ToolUseConfirmed':
      return { ...head, tool_use_id: event.data.tool_use_event_id, result: event.data.result, deny_message: event.data.deny_message };
    case 'InterruptRequested':
      return head;
    case 'SessionUpdated':
      return { ...head, ...event.data };
    case 'SessionErrorRaised':
      return { ...head, error: { type: event.data.error_type, message: event.data.message, retry_status: { type: event.data.retry_status } } };
    case 'SessionTerminated':
    case 'SessionDeleted':
      return head;
    case 'SessionPaused':
      return { ...head, lifecycle: 'paused', sandbox_id: event.data.sandbox_id, turn_id: event.data.turn_id ?? null };
    case 'PauseRequested':
      return { ...head, lifecycle: 'pause_requested', turn_id: event.data.turn_id };
    case 'SessionResumed':
      return { ...head, lifecycle: 'resumed' };
    case 'TurnCheckpointed':
      return { ...head, turn_id: event.data.turn_id, message_event_id: event.data.message_event_id, workspace_snapshot: event.data.workspace, dropped_turn_ids: event.data.dropped_turn_ids };
    case 'ForkCreated':
      return { ...head, fork_session_id: event.data.fork_session_id, turn_id: event.data.turn_id, event_id: event.data.event_id, seq: event.data.seq };
    case 'SessionForked':
      return { ...head, from_session_id: event.data.from.session_id, from_turn_id: event.data.from.turn_id, from_event_id: event.data.from.event_id, from_seq: event.data.from.seq };
    case 'SessionImported': {
      const f = event.data.from;
      return { ...head, from_session_id: f.session_id, from_agent: f.agent, from_environment_id: f.environment_id, exported_at: f.exported_at, journal_events: f.journal_events, files: f.files, workspace: f.workspace_blob !== null, resources_not_carried: f.resources_not_carried };
    }
    case 'EgressDenied':
      return { ...head, host: event.data.host, port: event.data.port, reason: event.data.reason, setting: event.data.setting, message: event.data.message, turn_id: event.data.turn_id };
    default:
      return { ...head, ...event.data };
  }
}

/**
 * The body of an event message on NATS: the recorded event Berth's services read, plus `public`,
 * the event exactly as `GET /v1/sessions/{id}/events` renders it (what outside subscribers read;
 * docs/events.md).
 */
export type EventMessage = RecordedEvent & Readonly<{ public: PublicEvent }>;

export const toEventMessage = (event: RecordedEvent): EventMessage => ({ ...event, public: toPublicEvent(event) });
