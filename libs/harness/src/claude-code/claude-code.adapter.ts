import { AGENT_TOOL_NAMES, CUSTOM_TOOLS_MCP_SERVER, mcpServerInUse, resolveAgentTools, type AgentOutput, type AgentToolName, type PermissionMode } from '@berth/contracts';
import type {
  ConfirmationDecision,
  HarnessAdapter,
  ParseStep,
  PendingConfirmation,
  TranscriptLocation,
  TurnInput,
  TurnPlan,
} from '../harness-adapter.port';
import { arr, contentBlocks, num, obj, parseJsonLine, str, textContent, type JsonObject } from '../json-line';
import { freshState, holdToolUse, publicToolName, releaseAllHeld, releaseToolUse, toolResultOutput, type ParseState, type ToolCallOutput } from '../parse-state';
import { customToolsLaunch, type CustomToolsLaunch } from '../custom-tools/custom-tools-server';
import { claudeProjectKey } from './claude-project-key';

/** Claude Code's name for each toolset tool (`--tools`, permission rules, `tool_use` blocks). */
export const CLAUDE_TOOL_NAMES: Readonly<Record<AgentToolName, string>> = {
  bash: 'Bash',
  edit: 'Edit',
  read: 'Read',
  write: 'Write',
  glob: 'Glob',
  grep: 'Grep',
  web_fetch: 'WebFetch',
  web_search: 'WebSearch',
};
const TOOLSET_NAMES: Readonly<Record<string, string>> = Object.fromEntries(Object.entries(CLAUDE_TOOL_NAMES).map(([api, claude]) => [claude, api]));

/** How long Claude Code lets a custom tool call wait for its result (`MCP_TOOL_TIMEOUT`, ms). */
const CUSTOM_TOOL_TIMEOUT_MS = String(24 * 60 * 60 * 1000);

/** Claude Code names an MCP tool `mcp__<server>__<tool>` (server names never hold `__`: the contract refuses them). */
const mcpToolName = (server: string, tool?: string): string => (tool === undefined ? `mcp__${server}` : `mcp__${server}__${tool}`);

/**
 * Claude Code in headless stream-json mode (`claude -p --input-format stream-json --output-format
 * stream-json --verbose`). The prompt goes in as a `user` line; stdin stays open for the control
 * protocol: `can_use_tool` permission prompts (with `--permission-prompt-tool stdio`) and
 * `interrupt`. The `result` line ends the turn.
 */
export class ClaudeCodeAdapter implements HarnessAdapter {
  readonly kind = 'claude-code' as const;
  readonly capabilities = { interruptOnStdin: true, modelKeyHeader: 'x-api-key' as const };

  buildTurn(input: TurnInput): TurnPlan {
    const { agent } = input;
    const custom = customToolsLaunch(agent, input.home);
    const argv = [
      'claude',
      '-p',
      '--output-format=stream-json',
      '--input-format=stream-json',
      '--verbose',
      `--model=${agent.model.id}`,
      ...(agent.model.effort ? [`--effort=${agent.model.effort.type}`] : []),
      ...toolArgs(input, custom),
      ...(agent.system ? [`--append-system-prompt=${agent.system}`] : []),
      // `=` keeps an id that starts with a dash from being read as a flag.
      ...(input.resumeId === null ? [] : [`--resume=${input.resumeId}`]),
    ];
    return {
      argv,
      env: {
        HOME: input.home,
        ANTHROPIC_BASE_URL: input.model.baseUrl,
        // Claude Code sends some ids as one of its aliases (`claude-opus-4-1` went out as the opus
        // alias's current model); resolving every alias to the agent's model keeps the id as given.
        ANTHROPIC_DEFAULT_OPUS_MODEL: agent.model.id,
        ANTHROPIC_DEFAULT_SONNET_MODEL: agent.model.id,
        ANTHROPIC_DEFAULT_HAIKU_MODEL: agent.model.id,
        // Offline: no telemetry, auto-update or other start-up traffic.
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
        DISABLE_AUTOUPDATER: '1',
        // The sandbox is the containment; this lets bypassPermissions run as root inside it.
        IS_SANDBOX: '1',
        // A custom tool call waits for the client's result: a day, not Claude Code's default.
        ...(custom === null ? {} : { MCP_TOOL_TIMEOUT: CUSTOM_TOOL_TIMEOUT_MS }),
      },
      secretEnv: { ANTHROPIC_API_KEY: input.model.apiKeyEnv },
      stdinLines: [
        JSON.stringify({ type: 'user', message: { role: 'user', content: input.prompt }, parent_tool_use_id: null, session_id: '' }),
      ],
      keepStdinOpen: true,
      files: custom?.files ?? [],
    };
  }

  initialState(permissionMode: PermissionMode): ParseState {
    return freshState(permissionMode);
  }

  parseLine(line: string, state: ParseState): ParseStep {
    const message = parseJsonLine(line);
    if (message === null) return { state, outputs: [] };
    // Sub-agent traffic (Task tool) stays inside the harness: only the main thread becomes events.
    if (message['parent_tool_use_id'] !== null && message['parent_tool_use_id'] !== undefined) return { state, outputs: [] };
    switch (message['type']) {
      case 'system':
        return this.system(message, state);
      case 'assistant':
        return this.assistant(message, state);
      case 'user':
        return this.toolResults(message, state);
      case 'control_request':
        return this.controlRequest(message, state);
      case 'result':
        return this.result(message, state);
      default:
        return { state, outputs: [] };
    }
  }

  answerConfirmation(pending: PendingConfirmation, decision: ConfirmationDecision): string {
    const response =
      decision.result === 'allow'
        ? { behavior: 'allow', updatedInput: pending.input }
        : { behavior: 'deny', message: decision.denyMessage ?? 'The user denied this tool use.' };
    return JSON.stringify({ type: 'control_response', response: { subtype: 'success', request_id: pending.requestId, response } });
  }

  interruptLine(): string {
    // Nothing waits on the reply, so one fixed request id serves every interrupt.
    return JSON.stringify({ type: 'control_request', request_id: 'berth_interrupt', request: { subtype: 'interrupt' } });
  }

  transcriptLocations(home: string, cwd: string, sessionId: string): readonly TranscriptLocation[] {
    const dir = `${home}/.claude/projects/${claudeProjectKey(cwd)}`;
    return [
      { dir, nameEndsWith: `${sessionId}.jsonl`, recursive: false },
      // Sub-agent transcripts and large tool outputs live in a directory named after the session.
      { dir: `${dir}/${sessionId}`, nameEndsWith: '', recursive: true },
    ];
  }

  private system(message: JsonObject, state: ParseState): ParseStep {
    const sessionId = str(message['session_id']);
    if (message['subtype'] !== 'init' || sessionId === undefined) return { state, outputs: [] };
    return { state: { ...state, sessionId }, outputs: [], harnessSessionId: sessionId };
  }

  private assistant(message: JsonObject, initial: ParseState): ParseStep {
    // A failed model call shows up as a synthetic assistant line; the `result` line reports it as the turn's error.
    if (message['is_api_error_message'] === true) return { state: initial, outputs: [] };
    let state = initial;
    const outputs: AgentOutput[] = [];
    for (const raw of arr(obj(message['message'])['content'])) {
      const block = obj(raw);
      switch (block['type']) {
        case 'text':
          if (str(block['text'])) outputs.push({ kind: 'message', content: textContent(block['text'] as string) });
          break;
        case 'thinking':
        case 'redacted_thinking':
          outputs.push({ kind: 'thinking' });
          break;
        case 'tool_use': {
          const toolUse = toolCall(str(block['id']) ?? '', str(block['name']) ?? 'unknown', obj(block['input']));
          // In always_ask a `can_use_tool` request (ask) or its result (no ask needed) decides how it is emitted.
          const step = holdToolUse(state, toolUse);
          state = step.state;
          outputs.push(...step.outputs);
          break;
        }
      }
    }
    return { state, outputs };
  }

  private toolResults(message: JsonObject, initial: ParseState): ParseStep {
    let state = initial;
    const outputs: AgentOutput[] = [];
    for (const raw of arr(obj(message['message'])['content'])) {
      const block = obj(raw);
      if (block['type'] !== 'tool_result') continue;
      const toolUseId = str(block['tool_use_id']) ?? '';
      const released = releaseToolUse(state, toolUseId, false, unseenToolUse(toolUseId));
      state = released.state;
      outputs.push(...released.outputs, ...toolResultOutput(state, { tool_use_id: toolUseId, content: contentBlocks(block['content']), is_error: block['is_error'] === true }));
    }
    return { state, outputs };
  }

  private controlRequest(message: JsonObject, state: ParseState): ParseStep {
    const request = obj(message['request']);
    const requestId = str(message['request_id']);
    const toolUseId = str(request['tool_use_id']);
    if (request['subtype'] !== 'can_use_tool' || requestId === undefined || toolUseId === undefined) return { state, outputs: [] };
    const released = releaseToolUse(state, toolUseId, true, unseenToolUse(toolUseId, str(request['tool_name']), obj(request['input'])));
    return { ...released, confirmation: { toolUseId, requestId, input: { ...obj(request['input']) } } };
  }


  private result(message: JsonObject, initial: ParseState): ParseStep {
    const { state, outputs } = releaseAllHeld(initial);
    const usage = obj(message['usage']);
    outputs.push({
      kind: 'usage',
      usage: {
        input_tokens: num(usage['input_tokens']),
        output_tokens: num(usage['output_tokens']),
        cache_creation_input_tokens: num(usage['cache_creation_input_tokens']),
        cache_read_input_tokens: num(usage['cache_read_input_tokens']),
      },
    });
    const terminalReason = str(message['terminal_reason']) ?? '';
    const interrupted = terminalReason.startsWith('aborted');
    const failed = message['is_error'] === true && !interrupted;
    const sessionId = str(message['session_id']);
    return {
      state: { ...state, sessionId: sessionId ?? state.sessionId },
      outputs,
      ...(sessionId === undefined ? {} : { harnessSessionId: sessionId }),
      terminal: {
        ok: !failed,
        interrupted,
        error: failed ? resultError(message) : null,
      },
    };
  }
}

/** A tool use the harness asks about (or reports a result for) without an assistant line showing it first. */
function unseenToolUse(toolUseId: string, name?: string, input?: JsonObject): ToolCallOutput {
  return toolCall(toolUseId, name ?? 'unknown', input ?? {});
}

function resultError(message: JsonObject): string {
  const errors = arr(message['errors']).filter((e): e is string => typeof e === 'string');
  return str(message['result']) || errors.join('; ') || `claude ended the turn with ${str(message['subtype']) ?? 'an error'}`;
}

/**
 * The agent's tools as flags. `--tools` is exactly the enabled toolset tools; MCP servers come only
 * from `--mcp-config` (`--strict-mcp-config` ignores a workspace's own `.mcp.json`); disabled MCP
 * tools are `--disallowedTools` (not offered to the model). Permissions: `bypassPermissions` runs
 * everything except what an `ask` rule names, and those go to `can_use_tool` on stdin (verified
 * with 2.1.332: an ask rule beats bypass, and beats an allow rule for the same tool).
 */
function toolArgs(input: TurnInput, custom: CustomToolsLaunch | null): string[] {
  const tools = resolveAgentTools(input.agent);
  const enabled = AGENT_TOOL_NAMES.filter((name) => tools.builtin[name].enabled);
  const ask = enabled.filter((name) => tools.builtin[name].policy === 'always_ask').map((name) => CLAUDE_TOOL_NAMES[name]);
  const servers = tools.mcp.filter(mcpServerInUse);
  const disallowed: string[] = [];
  for (const server of servers) {
    if (server.default.policy === 'always_ask') ask.push(mcpToolName(server.name));
    for (const [tool, grant] of Object.entries(server.tools)) {
      if (!grant.enabled) disallowed.push(mcpToolName(server.name, tool));
      else if (grant.policy === 'always_ask' && server.default.policy !== 'always_ask') ask.push(mcpToolName(server.name, tool));
    }
  }
  const mcpServers: Record<string, unknown> = Object.fromEntries(servers.map((s) => [s.name, { type: 'http', url: s.url }]));
  // The agent's custom tools: Berth's stdio server in the sandbox, which hands each call to the platform.
  if (custom !== null) mcpServers[CUSTOM_TOOLS_MCP_SERVER] = { type: 'stdio', command: custom.command, args: custom.args };
  return [
    '--permission-mode=bypassPermissions',
    `--tools=${enabled.map((name) => CLAUDE_TOOL_NAMES[name]).join(',')}`,
    '--strict-mcp-config',
    ...(Object.keys(mcpServers).length > 0 ? [`--mcp-config=${JSON.stringify({ mcpServers })}`] : []),
    ...(disallowed.length > 0 ? [`--disallowedTools=${disallowed.join(',')}`] : []),
    ...(ask.length > 0 ? ['--permission-prompt-tool=stdio', `--settings=${JSON.stringify({ permissions: { ask } })}`] : []),
  ];
}

/** A `tool_use` block as an output: a custom tool (Berth's server), an MCP call (`mcp__<server>__<tool>`) or a tool under its toolset name. */
function toolCall(id: string, claudeName: string, input: JsonObject): ToolCallOutput {
  const mcp = /^mcp__(.+?)__(.+)$/.exec(claudeName);
  if (mcp && mcp[1] === CUSTOM_TOOLS_MCP_SERVER) return { kind: 'custom_tool_use', tool_use_id: id, name: mcp[2], input: { ...input } };
  if (mcp) return { kind: 'mcp_tool_use', tool_use_id: id, server_name: mcp[1], name: mcp[2], input: { ...input }, needs_confirmation: false };
  return { kind: 'tool_use', tool_use_id: id, name: publicToolName(claudeName, TOOLSET_NAMES), input: { ...input }, needs_confirmation: false };
}
