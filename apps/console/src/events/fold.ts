import type { PublicEvent } from '../api/types';

/**
 * Events → what the session view draws. Pure: the same events (in any number of copies) always
 * give the same blocks, so a replay after reconnect can never show a message twice.
 */

export type ToolBlock = {
  kind: 'tool';
  /** The `agent.tool_use` event id, which results and confirmations refer to. */
  id: string;
  name: string;
  input: unknown;
  permission: string | null;
  result: { text: string; isError: boolean } | null;
  confirmation: { result: 'allow' | 'deny'; denyMessage: string | null } | null;
  /** True while the session is idle waiting for someone to allow or deny this call (or, for a custom tool, to send its result). */
  awaitingConfirmation: boolean;
  /** One of the agent's custom tools: the application (or you) runs it and sends its result. */
  custom: boolean;
};

export type Block =
  | { kind: 'user_message'; id: string; text: string; at: string | null }
  | { kind: 'agent_message'; id: string; text: string; at: string | null }
  | { kind: 'thinking'; id: string }
  | ToolBlock
  | { kind: 'status'; id: string; label: string; tone: StatusTone; detail: string | null }
  | { kind: 'error'; id: string; errorType: string; message: string; retryStatus: string | null }
  | { kind: 'notice'; id: string; label: string; detail: string | null };

export type StatusTone = 'running' | 'idle' | 'waiting' | 'failed' | 'terminated';

export type LiveStatus = 'idle' | 'running' | 'waiting' | 'terminated' | 'deleted' | 'unknown';

export type SessionTimeline = {
  blocks: Block[];
  status: LiveStatus;
  /** Tool-use event ids the session is blocked on (requires_action), not yet answered. */
  pendingToolUseIds: string[];
  usage: { input_tokens?: number; output_tokens?: number } | null;
  /** `user.message` ids whose turn can be forked from (it completed with a workspace snapshot still kept). */
  forkable: string[];
};

type Draft = {
  blocks: Block[];
  tools: Map<string, ToolBlock>;
  seen: Set<string>;
  status: LiveStatus;
  pending: string[];
  usage: SessionTimeline['usage'];
  /** Turn id → its `user.message` id, for the turns with a kept snapshot. */
  forkPoints: Map<string, string>;
};

export function foldEvents(events: readonly PublicEvent[]): SessionTimeline {
  const draft: Draft = { blocks: [], tools: new Map(), seen: new Set(), status: 'unknown', pending: [], usage: null, forkPoints: new Map() };
  for (const event of events) {
    if (draft.seen.has(event.id)) continue;
    draft.seen.add(event.id);
    apply(draft, event);
  }
  const pending = draft.pending.filter((id) => {
    const tool = draft.tools.get(id);
    return !tool?.confirmation && !(tool?.custom === true && tool.result !== null);
  });
  for (const tool of draft.tools.values()) tool.awaitingConfirmation = pending.includes(tool.id);
  return { blocks: draft.blocks, status: draft.status, pendingToolUseIds: pending, usage: draft.usage, forkable: [...draft.forkPoints.values()] };
}

function apply(draft: Draft, e: PublicEvent): void {
  switch (e.type) {
    case 'user.message':
      draft.blocks.push({ kind: 'user_message', id: e.id, text: contentText(e.content), at: e.processed_at });
      return;
    case 'agent.message':
      draft.blocks.push({ kind: 'agent_message', id: e.id, text: contentText(e.content), at: e.processed_at });
      return;
    case 'agent.thinking':
      draft.blocks.push({ kind: 'thinking', id: e.id });
      return;
    case 'agent.tool_use':
      toolFor(draft, e.id, str(e.name) ?? 'tool', e.input, str(e.evaluated_permission));
      return;
    case 'agent.custom_tool_use':
      toolFor(draft, e.id, str(e.name) ?? 'tool', e.input, null).custom = true;
      return;
    case 'user.custom_tool_result': {
      const useId = str(e.custom_tool_use_id);
      if (!useId) return;
      toolFor(draft, useId).result = { text: contentText(e.content), isError: e.is_error === true };
      draft.pending = draft.pending.filter((id) => id !== useId);
      return;
    }
    case 'agent.mcp_tool_use':
      // An MCP tool is named by its server too: `docs.lookup`.
      toolFor(draft, e.id, `${str(e.mcp_server_name) ?? 'mcp'}.${str(e.name) ?? 'tool'}`, e.input, str(e.evaluated_permission));
      return;
    case 'agent.tool_result':
    case 'agent.mcp_tool_result': {
      const useId = str(e.tool_use_id) ?? str(e.mcp_tool_use_id) ?? e.id;
      toolFor(draft, useId).result = { text: contentText(e.content), isError: e.is_error === true };
      return;
    }
    case 'user.tool_confirmation': {
      const useId = str(e.tool_use_id);
      if (!useId) return;
      const result = e.result === 'deny' ? 'deny' : 'allow';
      toolFor(draft, useId).confirmation = { result, denyMessage: str(e.deny_message) };
      draft.pending = draft.pending.filter((id) => id !== useId);
      return;
    }
    case 'user.interrupt':
      draft.blocks.push({ kind: 'notice', id: e.id, label: 'Interrupt requested', detail: null });
      return;
    case 'session.status_running':
      draft.status = 'running';
      draft.blocks.push({ kind: 'status', id: e.id, label: 'Running', tone: 'running', detail: null });
      return;
    case 'session.status_rescheduled':
      draft.status = 'running';
      draft.blocks.push({ kind: 'status', id: e.id, label: 'Rescheduling', tone: 'running', detail: null });
      return;
    case 'session.status_idle':
      applyIdle(draft, e);
      return;
    case 'session.status_terminated':
      draft.status = 'terminated';
      draft.pending = [];
      draft.blocks.push({ kind: 'status', id: e.id, label: 'Terminated', tone: 'terminated', detail: null });
      return;
    case 'session.deleted':
      draft.status = 'deleted';
      draft.pending = [];
      draft.blocks.push({ kind: 'status', id: e.id, label: 'Deleted', tone: 'terminated', detail: null });
      return;
    case 'session.error':
      draft.blocks.push(errorBlock(e));
      return;
    case 'session.usage':
      draft.usage = isRecord(e.usage) ? (e.usage as SessionTimeline['usage']) : null;
      return;
    case 'berth.turn_checkpointed':
      applyCheckpoint(draft, e);
      return;
    default:
      if (e.type.startsWith('berth.')) applyBerthNotice(draft, e);
  }
}

/** A completed turn's checkpoint: with a workspace snapshot its message becomes a fork point; turns whose snapshots retention dropped stop being one. */
function applyCheckpoint(draft: Draft, e: PublicEvent): void {
  if (Array.isArray(e.dropped_turn_ids)) for (const turn of e.dropped_turn_ids) if (typeof turn === 'string') draft.forkPoints.delete(turn);
  if (typeof e.turn_id === 'string' && typeof e.message_event_id === 'string' && isRecord(e.workspace_snapshot)) draft.forkPoints.set(e.turn_id, e.message_event_id);
}

function applyIdle(draft: Draft, e: PublicEvent): void {
  const stop = isRecord(e.stop_reason) ? e.stop_reason : {};
  if (stop.type === 'requires_action') {
    draft.status = 'waiting';
    draft.pending = Array.isArray(stop.event_ids) ? stop.event_ids.filter((x): x is string => typeof x === 'string') : [];
    const onlyResults = draft.pending.length > 0 && draft.pending.every((id) => draft.tools.get(id)?.custom === true);
    draft.blocks.push({ kind: 'status', id: e.id, label: onlyResults ? 'Waiting for a tool result' : 'Waiting for approval', tone: 'waiting', detail: null });
    return;
  }
  draft.status = 'idle';
  draft.pending = [];
  if (stop.type === 'retries_exhausted') {
    const failure = isRecord(e.berth_failure) ? e.berth_failure : {};
    const detail = [str(failure.reason), str(failure.message)].filter(Boolean).join(': ') || null;
    draft.blocks.push({ kind: 'status', id: e.id, label: 'Turn failed', tone: 'failed', detail });
    return;
  }
  draft.blocks.push({ kind: 'status', id: e.id, label: 'Idle', tone: 'idle', detail: str(stop.type) === 'end_turn' ? 'end of turn' : str(stop.type) });
}

function errorBlock(e: PublicEvent): Block {
  const err = isRecord(e.error) ? e.error : {};
  const retry = isRecord(err.retry_status) ? str(err.retry_status.type) : str(err.retry_status);
  return { kind: 'error', id: e.id, errorType: str(err.type) ?? 'unknown_error', message: str(err.message) ?? '', retryStatus: retry };
}

/** Berth's own events that matter to a reader; bookkeeping ones (session_created, …) stay hidden. */
const BERTH_NOTICES: Record<string, string> = {
  'berth.sandbox_bound': 'Sandbox ready',
  'berth.sandbox_lost': 'Sandbox lost',
  'berth.sandbox_start_failed': 'Sandbox failed to start',
  'berth.turn_recovered': 'Turn recovered',
  'berth.session_recovered': 'Session recovered',
  'berth.session_archived': 'Session archived',
  'berth.egress_denied': 'Network request refused',
  'berth.session_imported': 'Imported',
};

function applyBerthNotice(draft: Draft, e: PublicEvent): void {
  const label = BERTH_NOTICES[e.type];
  if (!label) return;
  // A refusal's message names the host and the setting that would allow it: more use than its reason code.
  const detail =
    e.type === 'berth.egress_denied'
      ? str(e.message)
      : e.type === 'berth.session_imported'
        ? `from ${str(e.from_session_id) ?? 'an archive'}, exported ${str(e.exported_at) ?? ''}`.trim()
        : (str(e.reason) ?? str(e.outcome) ?? str(e.message));
  draft.blocks.push({ kind: 'notice', id: e.id, label, detail });
}

/** The block for a tool-use id, created on first sight (a result may be all we have of it). */
function toolFor(draft: Draft, id: string, name?: string, input?: unknown, permission?: string | null): ToolBlock {
  let tool = draft.tools.get(id);
  if (!tool) {
    tool = { kind: 'tool', id, name: name ?? 'tool', input: input ?? null, permission: permission ?? null, result: null, confirmation: null, awaitingConfirmation: false, custom: false };
    draft.tools.set(id, tool);
    draft.blocks.push(tool);
  } else if (name !== undefined) {
    tool.name = name;
    tool.input = input ?? null;
    tool.permission = permission ?? null;
  }
  return tool;
}

/** Text of a content array (or plain string); non-text blocks are named, never dropped silently. */
export function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((block) => {
      if (!isRecord(block)) return '';
      if (block.type === 'text' && typeof block.text === 'string') return block.text;
      return `[${String(block.type ?? 'content')}]`;
    })
    .filter((s) => s !== '')
    .join('\n');
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function str(v: unknown): string | null {
  return typeof v === 'string' && v !== '' ? v : null;
}
