import { LEASE_ACTIVITY_EVENTS, leaseExpiryAfter, type ContentBlock, type EventType, type HarnessKind, type PermissionMode, type RecordedEvent, type SandboxLeaseTerms, type SessionResource, type ToolResultContent } from '@berth/contracts';
import type { AskedCall, CarriedDecision } from './continuation';

/** A bound container; `expires_at` is its lease, moved by turn activity as the kernel moves it when the binding has `lease` terms. */
export type SandboxBinding = Readonly<{ sandbox_id: string; generation: number; expires_at: string | null; lease: SandboxLeaseTerms | null }>;

/** The session's open turn, as far as the sandbox-manager cares. */
export type ViewTurn = Readonly<{
  turn_id: string;
  /** The kernel recorded an interrupt for it. */
  interrupting: boolean;
  /** Public `agent.tool_use` event id → the harness's own tool-use id, for the uses that asked. */
  asks: Readonly<Record<string, string>>;
  /** Event ids the turn still waits on (`user.tool_confirmation` or `user.custom_tool_result`). */
  pending: readonly string[];
  /** The turn's custom tool calls, in the order the harness made them, each with the client's result once it came. */
  custom_calls: readonly CustomToolCall[];
  /** The calls that asked, by `agent.tool_use` event id: what a continuing harness must re-issue to get the answer. */
  calls: Readonly<Record<string, AskedCall>>;
  /** The user's answers, by `agent.tool_use` event id. */
  answers: Readonly<Record<string, Readonly<{ result: 'allow' | 'deny'; deny_message: string | null }>>>;
  /** The session paused while the turn waited: the harness that asked is gone; the answers continue the turn in a new one. */
  harness_released: boolean;
  /**
   * Seq of the `TurnResumed` that continued the turn in a new harness after such a release (null:
   * the turn's first harness runs it): events before it were about the harness that is gone, and the
   * outputs recorded before it are numbered ahead of the continuing harness's.
   */
  continued_at: number | null;
}>;

/** One `agent.custom_tool_use` of the open turn. */
export type CustomToolCall = Readonly<{
  event_id: string;
  harness_tool_use_id: string;
  name: string;
  input: Readonly<Record<string, unknown>>;
  result: Readonly<{ content: ToolResultContent; is_error: boolean }> | null;
}>;

/**
 * What the sandbox-manager knows of one session: a small projection of the journal, folded by
 * `foldSessionEvent` from the event types in `SESSION_VIEW_EVENT_TYPES` only (agent output other
 * than tool uses never touches it). It agrees with the kernel's own state on every field it keeps
 * (a test in the sandbox-manager folds random journals through both).
 */
export type SessionView = Readonly<{
  /** Empty until the first event is folded. */
  session_id: string;
  /** Highest journal seq folded: an event at or below it changes nothing. */
  last_seq: number;
  exists: boolean;
  owner_id: string;
  environment_id: string;
  agent: Readonly<{ id: string; version: number }>;
  harness: HarnessKind;
  permission_mode: PermissionMode;
  /** `terminated` can become `open` again through a recover; `deleted` is final. */
  lifecycle: 'open' | 'terminated' | 'deleted';
  /** Paused on request: no sandbox until a resume (or a message) asks for one. */
  paused: boolean;
  /** The live sandbox; null when none is bound or the bound one was lost. */
  sandbox: SandboxBinding | null;
  /** Generation the kernel asked a sandbox for and nobody bound yet. */
  sandbox_request: number | null;
  /** The harness's own conversation id, to resume it next turn. */
  harness_session_id: string | null;
  turn: ViewTurn | null;
  /** The user message of every turn not finished yet (the current one and the queued ones). */
  prompts: Readonly<Record<string, readonly ContentBlock[]>>;
  /** The session's resources (files, repositories), to mount in each of its sandboxes. */
  resources: readonly SessionResource[];
  /** The vaults pinned at create: their `environment_variable` credentials' placeholders go into the harness's environment. */
  vault_ids: readonly string[];
  /** A fork's origin: its first workspace is that turn's snapshot. */
  forked_from: Readonly<{ session_id: string; turn_id: string }> | null;
  /** An import's workspace, staged as a blob: restored into its first sandbox (the blob is consumed then). */
  import_workspace: string | null;
}>;

export const emptySessionView = (): SessionView => ({
  session_id: '',
  last_seq: 0,
  exists: false,
  owner_id: '',
  environment_id: '',
  agent: { id: '', version: 0 },
  harness: 'claude-code',
  permission_mode: 'always_allow',
  lifecycle: 'open',
  paused: false,
  sandbox: null,
  sandbox_request: null,
  harness_session_id: null,
  turn: null,
  prompts: {},
  resources: [],
  vault_ids: [],
  forked_from: null,
  import_workspace: null,
});

/** The journal events the view folds; the manager reads only these back from the journal. */
export const SESSION_VIEW_EVENT_TYPES: readonly EventType[] = [
  'SessionCreated',
  'PermissionModeSet',
  'UserMessageReceived',
  'TurnStarted',
  'AgentToolUseRecorded',
  'AgentMcpToolUseRecorded',
  'AgentCustomToolUseRecorded',
  'CustomToolResultReceived',
  'TurnAwaitingConfirmation',
  'ToolUseConfirmed',
  'TurnResumed',
  'InterruptRequested',
  'TurnCompleted',
  'TurnFailed',
  'HarnessSessionRecorded',
  'ConversationEnded',
  'SandboxRequested',
  'SandboxBound',
  'SandboxStartFailed',
  'SandboxLost',
  'SessionRecovered',
  'SessionTerminated',
  'SessionArchived',
  'SessionDeleted',
  'SessionResourceAdded',
  'SessionResourceRemoved',
  'SessionPaused',
  'SessionResumed',
  'SessionForked',
  'SessionImported',
];

/** The answers a continuing harness carries: every answered call of the turn that asked before its harness was released. */
export function carriedDecisions(turn: ViewTurn): CarriedDecision[] {
  return Object.entries(turn.answers).flatMap(([eventId, answer]) => {
    const harnessToolUseId = turn.asks[eventId];
    const call = turn.calls[eventId];
    return harnessToolUseId === undefined || call === undefined ? [] : [{ harness_tool_use_id: harnessToolUseId, call, ...answer }];
  });
}

const withoutKey = <T>(record: Readonly<Record<string, T>>, key: string): Record<string, T> => {
  const { [key]: _dropped, ...rest } = record;
  return rest;
};

/** Terminate, archive and delete give the sandbox back and drop whatever waited to run. */
const released = (view: SessionView): SessionView => ({ ...view, sandbox: null, sandbox_request: null, turn: null, prompts: {} });

const onTurn = (view: SessionView, turnId: string, change: (turn: ViewTurn) => ViewTurn): SessionView =>
  view.turn?.turn_id === turnId ? { ...view, turn: change(view.turn) } : view;

/** As in the kernel: a turn starting or ending restarts a lease with terms. */
const leaseAfter = (binding: SandboxBinding | null, event: RecordedEvent): SandboxBinding | null =>
  binding?.lease == null || !LEASE_ACTIVITY_EVENTS.has(event.type) ? binding : { ...binding, expires_at: leaseExpiryAfter(binding.lease, event.occurred_at) };

/** Folds one journal event into the view. Total: an event that does not fit leaves the view as it was. */
export function foldSessionEvent(view: SessionView, event: RecordedEvent): SessionView {
  if (event.seq <= view.last_seq) return view;
  const v: SessionView = { ...view, session_id: event.session_id, last_seq: event.seq, sandbox: leaseAfter(view.sandbox, event) };
  switch (event.type) {
    case 'SessionCreated': {
      const d = event.data;
      return { ...v, exists: true, owner_id: d.owner_id, environment_id: d.environment_id, agent: d.agent, harness: d.harness, permission_mode: d.permission_mode, vault_ids: d.vault_ids ?? [] };
    }
    case 'PermissionModeSet':
      return { ...v, permission_mode: event.data.mode };
    case 'UserMessageReceived':
      return { ...v, prompts: { ...v.prompts, [event.data.turn_id]: event.data.content } };
    case 'TurnStarted':
      return { ...v, turn: { turn_id: event.data.turn_id, interrupting: false, asks: {}, pending: [], calls: {}, answers: {}, harness_released: false, continued_at: null, custom_calls: [] } };
    case 'AgentToolUseRecorded':
    case 'AgentMcpToolUseRecorded':
      return event.data.evaluated_permission === 'ask'
        ? onTurn(v, event.data.turn_id, (t) => ({
            ...t,
            asks: { ...t.asks, [event.id]: event.data.harness_tool_use_id },
            calls: { ...t.calls, [event.id]: { name: event.data.name, mcp_server_name: 'mcp_server_name' in event.data ? event.data.mcp_server_name : null, input: event.data.input } },
          }))
        : v;
    case 'AgentCustomToolUseRecorded': {
      const { harness_tool_use_id, name, input } = event.data;
      return onTurn(v, event.data.turn_id, (t) => ({ ...t, custom_calls: [...t.custom_calls, { event_id: event.id, harness_tool_use_id, name, input, result: null }] }));
    }
    case 'CustomToolResultReceived': {
      const { custom_tool_use_event_id: id, content, is_error } = event.data;
      return onTurn(v, event.data.turn_id, (t) => ({
        ...t,
        pending: t.pending.filter((p) => p !== id),
        custom_calls: t.custom_calls.map((c) => (c.event_id === id ? { ...c, result: { content, is_error } } : c)),
      }));
    }
    case 'TurnAwaitingConfirmation':
      // As in the kernel: a turn waiting for the user is no longer "interrupting" (it waits instead).
      return onTurn(v, event.data.turn_id, (t) => ({ ...t, pending: event.data.event_ids, interrupting: false }));
    case 'ToolUseConfirmed':
      return onTurn(v, event.data.turn_id, (t) => ({
        ...t,
        pending: t.pending.filter((id) => id !== event.data.tool_use_event_id),
        answers: { ...t.answers, [event.data.tool_use_event_id]: { result: event.data.result, deny_message: event.data.deny_message } },
      }));
    case 'TurnResumed':
      // After a release, the turn goes on in a new harness: that one is not released.
      return onTurn(v, event.data.turn_id, (t) => ({ ...t, pending: [], interrupting: false, ...(t.harness_released ? { harness_released: false, continued_at: event.seq } : {}) }));
    case 'InterruptRequested':
      return event.data.turn_id === null ? v : onTurn(v, event.data.turn_id, (t) => ({ ...t, interrupting: true }));
    case 'TurnCompleted':
    case 'TurnFailed':
      return v.turn?.turn_id === event.data.turn_id ? { ...v, turn: null, prompts: withoutKey(v.prompts, event.data.turn_id) } : v;
    case 'HarnessSessionRecorded':
      return { ...v, harness_session_id: event.data.harness_session_id };
    case 'ConversationEnded':
      return { ...v, harness_session_id: null };
    case 'SandboxRequested':
      return { ...v, sandbox_request: event.data.generation };
    case 'SandboxBound':
      return {
        ...v,
        sandbox: { sandbox_id: event.data.sandbox_id, generation: event.data.generation, expires_at: event.data.expires_at, lease: event.data.lease ?? null },
        sandbox_request: null,
      };
    case 'SandboxStartFailed':
      return v.sandbox_request === event.data.generation ? { ...v, sandbox_request: null } : v;
    case 'SandboxLost':
      return v.sandbox?.sandbox_id === event.data.sandbox_id && v.sandbox.generation === event.data.generation ? { ...v, sandbox: null } : v;
    case 'SessionRecovered': {
      const { outcome } = event.data;
      if (outcome === 'manual-recovery-required') return v;
      return { ...v, lifecycle: v.lifecycle === 'deleted' ? 'deleted' : 'open', sandbox: outcome === 'reattached' ? v.sandbox : null };
    }
    case 'SessionTerminated':
      return { ...released(v), lifecycle: 'terminated', paused: false };
    case 'SessionArchived':
      return released(v);
    case 'SessionDeleted':
      return { ...released(v), lifecycle: 'deleted', paused: false };
    case 'SessionPaused': {
      const paused: SessionView = { ...v, paused: true, sandbox: null, sandbox_request: null };
      const waiting = event.data.turn_id;
      return waiting === null || waiting === undefined ? paused : onTurn(paused, waiting, (t) => ({ ...t, harness_released: true }));
    }
    case 'SessionResumed':
      return { ...v, paused: false };
    case 'SessionForked':
      return { ...v, forked_from: { session_id: event.data.from.session_id, turn_id: event.data.from.turn_id }, harness_session_id: event.data.from.harness_session_id };
    case 'SessionImported':
      return { ...v, import_workspace: event.data.from.workspace_blob, harness_session_id: event.data.from.harness_session_id };
    case 'SessionResourceAdded':
      return { ...v, resources: [...v.resources.filter((r) => r.id !== event.data.resource.id), event.data.resource] };
    case 'SessionResourceRemoved':
      return { ...v, resources: v.resources.filter((r) => r.id !== event.data.resource_id) };
    default:
      return v;
  }
}

/** A user message as the plain text a harness takes. */
export function promptText(content: readonly ContentBlock[]): string {
  return content.map((block) => (block.type === 'text' ? block.text : `[${block.type} attachment omitted]`)).join('\n');
}
