import { mcpServerInUse, resolveAgentTools, type AgentOutput, type AgentToolName, type PermissionMode } from '@berth/contracts';
import type { HarnessAdapter, ParseStep, TranscriptLocation, TurnInput, TurnPlan } from '../harness-adapter.port';
import { arr, num, obj, parseJsonLine, str, textContent, type JsonObject } from '../json-line';
import { emitToolUse, freshState, type ParseState, type ToolCallOutput } from '../parse-state';

/** Provider id in Codex's config; any id works, it only links `model_provider` to its table. */
const PROVIDER = 'berth';

/**
 * Codex's tool items and the toolset tool each is: its shell does what bash, read, write, edit,
 * glob and grep do (one switch for all of them, `HARNESS_SUPPORT.codex.toolGroups`), `file_change`
 * is its patch tool, `web_search` its search.
 */
export const CODEX_TOOL_ITEMS: Readonly<Record<string, AgentToolName>> = { command_execution: 'bash', file_change: 'edit', web_search: 'web_search' };

/**
 * Codex in `codex exec --json` mode: one process per turn, the prompt as the last argument,
 * `exec resume <thread id>` for later turns. The model, the agent's system prompt, its tools and
 * MCP servers go into `$CODEX_HOME/config.toml` (Codex ignores `OPENAI_BASE_URL`). `exec` cannot
 * ask for approval: the API refuses `always_ask` for Codex (`HARNESS_SUPPORT`).
 */
export class CodexAdapter implements HarnessAdapter {
  readonly kind = 'codex' as const;
  readonly capabilities = { interruptOnStdin: false };

  buildTurn(input: TurnInput): TurnPlan {
    const { agent } = input;
    const codexHome = `${input.home}/.codex`;
    const tools = resolveAgentTools(agent);
    const config = [
      `model_provider = "${PROVIDER}"`,
      `model = ${tomlString(agent.model.id)}`,
      ...(agent.model.effort ? [`model_reasoning_effort = ${tomlString(agent.model.effort.type)}`] : []),
      // Codex sends `service_tier: priority` for models that offer it.
      ...(agent.model.speed === 'fast' ? ['service_tier = "fast"'] : []),
      ...(agent.system ? [`developer_instructions = ${tomlString(agent.system)}`] : []),
      ...(tools.builtin.web_search.enabled ? [] : ['web_search = "disabled"']),
      '',
      ...(tools.builtin.bash.enabled ? [] : ['[features]', 'shell_tool = false', 'unified_exec = false', '']),
      `[model_providers.${PROVIDER}]`,
      `name = "${PROVIDER}"`,
      `base_url = ${tomlString(`${input.model.baseUrl}/v1`)}`,
      `env_key = ${tomlString(input.model.apiKeyEnv)}`,
      'wire_api = "responses"',
      // Codex retries a failing model 5×6 times by default (about 25 s); keep an outage short so the turn fails visibly.
      'request_max_retries = 2',
      'stream_max_retries = 2',
      '',
      ...tools.mcp.filter(mcpServerInUse).flatMap((server) => {
        const named = Object.entries(server.tools);
        const listed = (enabled: boolean) => `[${named.filter(([, g]) => g.enabled === enabled).map(([name]) => tomlString(name)).join(', ')}]`;
        return [
          `[mcp_servers.${tomlString(server.name)}]`,
          `url = ${tomlString(server.url)}`,
          // Offered are the server's tools minus disabled_tools, or only enabled_tools when its default is disabled.
          server.default.enabled ? `disabled_tools = ${listed(false)}` : `enabled_tools = ${listed(true)}`,
          '',
        ];
      }),
    ].join('\n');
    const argv = [
      'codex',
      'exec',
      '--json',
      '--skip-git-repo-check',
      // The sandbox container is the containment; Codex's own seccomp sandbox is not nested in it.
      '--dangerously-bypass-approvals-and-sandbox',
      ...(input.resumeId === null ? [] : ['resume', input.resumeId]),
      '--',
      input.prompt,
    ];
    return {
      argv,
      env: { HOME: input.home, CODEX_HOME: codexHome },
      secretEnv: { [input.model.apiKeyEnv]: input.model.apiKeyEnv },
      stdinLines: [],
      keepStdinOpen: false,
      // Writing config.toml also creates CODEX_HOME, which Codex requires to exist.
      files: [{ path: `${codexHome}/config.toml`, content: config }],
    };
  }

  initialState(permissionMode: PermissionMode): ParseState {
    return freshState(permissionMode);
  }

  parseLine(line: string, state: ParseState): ParseStep {
    const event = parseJsonLine(line);
    if (event === null) return { state, outputs: [] };
    switch (event['type']) {
      case 'thread.started': {
        const threadId = str(event['thread_id']);
        return threadId === undefined ? { state, outputs: [] } : { state: { ...state, sessionId: threadId }, outputs: [], harnessSessionId: threadId };
      }
      case 'item.started':
        return this.itemStarted(obj(event['item']), state);
      case 'item.completed':
        return this.itemCompleted(obj(event['item']), state);
      case 'turn.completed': {
        const usage = obj(event['usage']);
        const cached = num(usage['cached_input_tokens']);
        return {
          state,
          outputs: [
            {
              kind: 'usage',
              usage: {
                // Codex counts cached tokens inside input_tokens; Managed Agents reports them apart.
                input_tokens: Math.max(0, num(usage['input_tokens']) - cached),
                output_tokens: num(usage['output_tokens']),
                cache_creation_input_tokens: num(usage['cache_write_input_tokens']),
                cache_read_input_tokens: cached,
              },
            },
          ],
          terminal: { ok: true, interrupted: false, error: null },
        };
      }
      case 'turn.failed':
        return { state, outputs: [], terminal: { ok: false, interrupted: false, error: str(obj(event['error'])['message']) ?? state.lastError ?? 'turn failed' } };
      case 'error':
        // Retry notices and fatal stream errors both arrive as `error`; `turn.failed` (or the exit) decides.
        return { state: { ...state, lastError: str(event['message']) ?? state.lastError }, outputs: [] };
      default:
        return { state, outputs: [] };
    }
  }

  answerConfirmation(): null {
    return null;
  }

  interruptLine(): null {
    return null;
  }

  transcriptLocations(home: string, _cwd: string, sessionId: string): readonly TranscriptLocation[] {
    // Rollouts are filed by local date: sessions/YYYY/MM/DD/rollout-<time>-<thread id>.jsonl.
    return [{ dir: `${home}/.codex/sessions`, nameEndsWith: `-${sessionId}.jsonl`, recursive: true }];
  }

  private itemStarted(item: JsonObject, state: ParseState): ParseStep {
    const toolUse = toolUseOf(item);
    return toolUse === null ? { state, outputs: [] } : emitToolUse(state, toolUse);
  }

  private itemCompleted(item: JsonObject, state: ParseState): ParseStep {
    switch (item['type']) {
      case 'agent_message':
        return { state, outputs: str(item['text']) ? [{ kind: 'message', content: textContent(item['text'] as string) }] : [] };
      case 'reasoning':
        return { state, outputs: [{ kind: 'thinking' }] };
      case 'error':
        // Non-fatal notices (e.g. "model metadata not found"); fatal ones end in `turn.failed`.
        return { state: { ...state, lastError: str(item['message']) ?? state.lastError }, outputs: [] };
      default: {
        const toolUse = toolUseOf(item);
        if (toolUse === null) return { state, outputs: [] };
        const started = emitToolUse(state, toolUse);
        const result: AgentOutput = { kind: toolUse.kind === 'mcp_tool_use' ? 'mcp_tool_result' : 'tool_result', tool_use_id: toolUse.tool_use_id, ...toolResultOf(item) };
        return { state: started.state, outputs: [...started.outputs, result] };
      }
    }
  }
}

/** Codex's tool items as tool calls: a toolset tool under its toolset name, or an MCP call. */
function toolUseOf(item: JsonObject): ToolCallOutput | null {
  const id = str(item['id']);
  const type = str(item['type']) ?? '';
  if (id === undefined) return null;
  if (type === 'mcp_tool_call') {
    return { kind: 'mcp_tool_use', tool_use_id: id, server_name: str(item['server']) ?? 'mcp', name: str(item['tool']) ?? 'tool', input: { ...obj(item['arguments']) }, needs_confirmation: false };
  }
  const name = CODEX_TOOL_ITEMS[type];
  if (name === undefined) return null;
  const input = type === 'command_execution' ? { command: str(item['command']) ?? '' } : type === 'file_change' ? { changes: arr(item['changes']) } : { query: str(item['query']) ?? '' };
  return { kind: 'tool_use', tool_use_id: id, name, input, needs_confirmation: false };
}

function toolResultOf(item: JsonObject): { content: Record<string, unknown>[]; is_error: boolean } {
  const failed = item['status'] === 'failed';
  switch (item['type']) {
    case 'command_execution': {
      const exitCode = item['exit_code'];
      return { content: textContent(str(item['aggregated_output']) ?? ''), is_error: failed || (typeof exitCode === 'number' && exitCode !== 0) };
    }
    case 'file_change': {
      const summary = arr(item['changes']).map((c) => `${str(obj(c)['kind']) ?? 'update'} ${str(obj(c)['path']) ?? ''}`).join('\n');
      return { content: textContent(summary), is_error: failed };
    }
    case 'mcp_tool_call': {
      const error = str(obj(item['error'])['message']);
      if (error !== undefined) return { content: textContent(error), is_error: true };
      return { content: arr(obj(item['result'])['content']).map((c) => ({ ...obj(c) })), is_error: failed };
    }
    default:
      return { content: [], is_error: failed };
  }
}

/** A TOML basic string. */
function tomlString(value: string): string {
  return JSON.stringify(value);
}
