import { CUSTOM_TOOLS_MCP_SERVER, type AgentOutput } from '@berth/contracts';
import type { ConfirmationDecision, ParseStep, PendingConfirmation } from '../harness-adapter.port';
import { num, obj, str, textContent, type JsonObject } from '../json-line';
import { addUsage, holdToolUse, releaseAllHeld, releaseToolUse, toolResultOutput, type ParseState } from '../parse-state';
import { fromAppServerItem, toolResultOf, toolUseOf } from './codex-items';

/**
 * Codex's `app-server` protocol (JSON-RPC 2.0 over stdio without the `jsonrpc` member), the one
 * Codex uses for clients that approve tool calls. Verified with codex 0.171.0 against a scripted
 * Responses API: `initialize` → `initialized` → `thread/start` (or `thread/resume`) → its answer
 * names the thread → `turn/start` with the prompt; with `approvalPolicy: "untrusted"` every command
 * that is not known to be safe and every file change first shows as `item/started`, then comes a
 * server request (`item/commandExecution/requestApproval`, `item/fileChange/requestApproval`)
 * answered with `{ decision: "accept" | "decline" }`; `turn/completed` ends the turn. Before a call of
 * an MCP tool it asks with an elicitation (`mcpServer/elicitation/request`, `_meta.codex_approval_kind:
 * "mcp_tool_call"`), answered `{ action: "accept", content: {} }`.
 */
const INITIALIZE = 1;
const THREAD = 2;
const TURN = 3;
const APPROVALS = new Set(['item/commandExecution/requestApproval', 'item/fileChange/requestApproval']);
const ELICITATION = 'mcpServer/elicitation/request';

/** The container is the sandbox: Codex's own is not nested in it; what needs approval is asked. */
const threadSettings = (cwd: string) => ({ cwd, approvalPolicy: 'untrusted', sandbox: 'danger-full-access' });

/** The stdin lines that open (or resume) the conversation; the prompt follows once the thread is known. */
export function appServerOpening(cwd: string, resumeId: string | null): string[] {
  return [
    JSON.stringify({ method: 'initialize', id: INITIALIZE, params: { clientInfo: { name: 'berth', title: 'Berth', version: '1' }, capabilities: null } }),
    JSON.stringify({ method: 'initialized' }),
    resumeId === null
      ? JSON.stringify({ method: 'thread/start', id: THREAD, params: threadSettings(cwd) })
      : JSON.stringify({ method: 'thread/resume', id: THREAD, params: { threadId: resumeId, ...threadSettings(cwd) } }),
  ];
}

export function answerAppServerApproval(pending: PendingConfirmation, decision: ConfirmationDecision): string {
  // The request id goes back as it came (a number or a string); the adapter kept it JSON-encoded.
  return `{"id":${pending.requestId},"result":${JSON.stringify({ decision: decision.result === 'allow' ? 'accept' : 'decline' })}}`;
}

export function parseAppServerLine(message: JsonObject, state: ParseState): ParseStep {
  const method = str(message['method']);
  if (method === undefined) return response(message, state);
  const params = obj(message['params']);
  if (APPROVALS.has(method) && message['id'] !== undefined) return approvalRequest(message, params, state);
  // A custom tool never asks: its call waits for the client's result, which is its own answer.
  if (method === ELICITATION && message['id'] !== undefined && params['serverName'] === CUSTOM_TOOLS_MCP_SERVER) {
    return { state, outputs: [], stdinLines: [`{"id":${JSON.stringify(message['id'])},"result":{"action":"accept","content":{}}}`] };
  }
  switch (method) {
    case 'item/started': {
      const toolUse = toolUseOf(fromAppServerItem(obj(params['item'])));
      return toolUse === null ? { state, outputs: [] } : holdToolUse(state, toolUse);
    }
    case 'item/completed':
      return itemCompleted(fromAppServerItem(obj(params['item'])), state);
    case 'thread/tokenUsage/updated': {
      const last = obj(obj(params['tokenUsage'])['last']);
      const cached = num(last['cachedInputTokens']);
      return {
        state: {
          ...state,
          usage: addUsage(state.usage, {
            // Codex counts cached tokens inside input_tokens; Managed Agents reports them apart.
            input_tokens: Math.max(0, num(last['inputTokens']) - cached),
            output_tokens: num(last['outputTokens']),
            cache_read_input_tokens: cached,
            cache_creation_input_tokens: num(last['cacheWriteInputTokens']),
          }),
        },
        outputs: [],
      };
    }
    case 'error':
      return { state: { ...state, lastError: str(obj(params['error'])['message']) ?? state.lastError }, outputs: [] };
    case 'turn/completed':
      return turnCompleted(obj(params['turn']), state);
    default:
      return { state, outputs: [] };
  }
}

/** Answers to our requests: the thread's id (then the prompt goes in), or a refusal that ends the turn. */
function response(message: JsonObject, state: ParseState): ParseStep {
  const error = obj(message['error']);
  if (message['id'] === THREAD || message['id'] === TURN) {
    if (message['error'] !== undefined) return { state, outputs: [], terminal: { ok: false, interrupted: false, error: str(error['message']) ?? 'codex refused the turn' } };
  }
  if (message['id'] !== THREAD) return { state, outputs: [] };
  const threadId = str(obj(obj(message['result'])['thread'])['id']);
  if (threadId === undefined) return { state, outputs: [] };
  const turnStart = JSON.stringify({ method: 'turn/start', id: TURN, params: { threadId, input: [{ type: 'text', text: state.prompt ?? '' }] } });
  return { state: { ...state, sessionId: threadId }, outputs: [], harnessSessionId: threadId, stdinLines: [turnStart] };
}

function approvalRequest(message: JsonObject, params: JsonObject, state: ParseState): ParseStep {
  const itemId = str(params['itemId']);
  if (itemId === undefined) return { state, outputs: [] };
  const fallback = { kind: 'tool_use' as const, tool_use_id: itemId, name: 'bash', input: { command: str(params['command']) ?? '' }, needs_confirmation: false };
  const released = releaseToolUse(state, itemId, true, fallback);
  const shown = released.outputs.find((o) => o.kind === 'tool_use' || o.kind === 'mcp_tool_use');
  return { ...released, confirmation: { toolUseId: itemId, requestId: JSON.stringify(message['id']), input: shown?.kind === 'tool_use' || shown?.kind === 'mcp_tool_use' ? shown.input : fallback.input } };
}

function itemCompleted(item: JsonObject, state: ParseState): ParseStep {
  switch (item['type']) {
    case 'agent_message':
      return { state, outputs: str(item['text']) ? [{ kind: 'message', content: textContent(item['text'] as string) }] : [] };
    case 'reasoning':
      return { state, outputs: [{ kind: 'thinking' }] };
    default: {
      const toolUse = toolUseOf(item);
      if (toolUse === null) return { state, outputs: [] };
      // A tool that ran without asking (a command Codex knows to be safe) is emitted as allowed.
      const released = releaseToolUse(state, toolUse.tool_use_id, false, toolUse);
      return { state: released.state, outputs: [...released.outputs, ...toolResultOutput(released.state, { tool_use_id: toolUse.tool_use_id, ...toolResultOf(item) })] };
    }
  }
}

function turnCompleted(turn: JsonObject, initial: ParseState): ParseStep {
  const { state, outputs } = releaseAllHeld(initial);
  const status = str(turn['status']);
  const usage: AgentOutput = { kind: 'usage', usage: state.usage };
  if (status === 'interrupted') return { state, outputs: [...outputs, usage], terminal: { ok: true, interrupted: true, error: null } };
  if (status === 'failed') {
    return { state, outputs: [...outputs, usage], terminal: { ok: false, interrupted: false, error: str(obj(turn['error'])['message']) ?? state.lastError ?? 'turn failed' } };
  }
  return { state, outputs: [...outputs, usage], terminal: { ok: true, interrupted: false, error: null } };
}
