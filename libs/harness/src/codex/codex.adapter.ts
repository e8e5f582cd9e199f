import { CUSTOM_TOOLS_MCP_SERVER, mcpServerInUse, permissionModeOf, resolveAgentTools, type PermissionMode } from '@berth/contracts';
import { customToolsLaunch } from '../custom-tools/custom-tools-server';
import type { ConfirmationDecision, HarnessAdapter, ParseStep, PendingConfirmation, TranscriptLocation, TurnInput, TurnPlan } from '../harness-adapter.port';
import { num, obj, parseJsonLine, str, textContent, type JsonObject } from '../json-line';
import { emitToolUse, freshState, toolResultOutput, type ParseState } from '../parse-state';
import { answerAppServerApproval, appServerOpening, parseAppServerLine } from './codex-app-server';
import { toolResultOf, toolUseOf } from './codex-items';

export { CODEX_TOOL_ITEMS } from './codex-items';

/** Provider id in Codex's config; any id works, it only links `model_provider` to its table. */
const PROVIDER = 'berth';

/** How long Codex lets a custom tool call wait for the client's result (`tool_timeout_sec`): its default is minutes, a client may take longer. */
const CUSTOM_TOOL_TIMEOUT_SEC = 24 * 60 * 60;

/**
 * How long Codex waits for an MCP server to start and answer `initialize` (`startup_timeout_sec`),
 * and how long a turn waits for it (`mcp_optional_startup_grace_ms`). Codex 0.171.0 gives a server
 * that is not `required` one second before it builds the turn's tools without it, silently: a
 * server reached through the egress on a busy host, or Berth's own stdio server starting `node`
 * there, missed it (the model called a tool it had not been offered). Its startup default, 10 s,
 * is also short for a TLS server through the egress.
 */
const MCP_STARTUP_TIMEOUT_SEC = 30;

/**
 * Codex, one process per turn. An agent without asking tools: `codex exec --json`, the prompt as
 * the last argument, `exec resume <thread id>` for later turns. One whose tools ask (all of them:
 * `HARNESS_SUPPORT.codex.confirmation`): `codex app-server`, whose protocol asks before commands
 * and file changes (`exec` cannot ask; see codex-app-server.ts). Either way the model, the agent's
 * system prompt, its tools and MCP servers go into `$CODEX_HOME/config.toml` (Codex ignores
 * `OPENAI_BASE_URL`) and the conversation is the same thread, resumed by id.
 */
export class CodexAdapter implements HarnessAdapter {
  readonly kind = 'codex' as const;
  readonly capabilities = { interruptOnStdin: false, modelKeyHeader: 'bearer' as const };

  buildTurn(input: TurnInput): TurnPlan {
    const { agent } = input;
    const codexHome = `${input.home}/.codex`;
    const tools = resolveAgentTools(agent);
    const custom = customToolsLaunch(agent, input.home);
    const config = [
      `model_provider = "${PROVIDER}"`,
      `model = ${tomlString(agent.model.id)}`,
      ...(agent.model.effort ? [`model_reasoning_effort = ${tomlString(agent.model.effort.type)}`] : []),
      // Codex sends `service_tier: priority` for models that offer it.
      ...(agent.model.speed === 'fast' ? ['service_tier = "fast"'] : []),
      ...(agent.system ? [`developer_instructions = ${tomlString(agent.system)}`] : []),
      ...(tools.builtin.web_search.enabled ? [] : ['web_search = "disabled"']),
      ...(tools.mcp.some(mcpServerInUse) ? [`mcp_optional_startup_grace_ms = ${MCP_STARTUP_TIMEOUT_SEC * 1000}`] : []),
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
          `startup_timeout_sec = ${MCP_STARTUP_TIMEOUT_SEC}`,
          // Offered are the server's tools minus disabled_tools, or only enabled_tools when its default is disabled.
          server.default.enabled ? `disabled_tools = ${listed(false)}` : `enabled_tools = ${listed(true)}`,
          '',
        ];
      }),
      // The agent's custom tools: Berth's stdio server in the sandbox, which hands each call to the platform.
      ...(custom === null
        ? []
        : [
            `[mcp_servers.${tomlString(CUSTOM_TOOLS_MCP_SERVER)}]`,
            `command = ${tomlString(custom.command)}`,
            `args = [${custom.args.map(tomlString).join(', ')}]`,
            `startup_timeout_sec = ${MCP_STARTUP_TIMEOUT_SEC}`,
            // Berth's own server: a turn without it would be a turn without the agent's custom tools.
            'required = true',
            `tool_timeout_sec = ${CUSTOM_TOOL_TIMEOUT_SEC}`,
            '',
          ]),
    ].join('\n');
    const files = [{ path: `${codexHome}/config.toml`, content: config }, ...(custom?.files ?? [])];
    const env = { HOME: input.home, CODEX_HOME: codexHome };
    const secretEnv = { [input.model.apiKeyEnv]: input.model.apiKeyEnv };
    if (permissionModeOf(agent) === 'always_ask') {
      // The prompt goes in once the thread is known (ParseStep.stdinLines); stdin stays open for the answers.
      return { argv: ['codex', 'app-server'], env, secretEnv, stdinLines: appServerOpening(input.cwd, input.resumeId), keepStdinOpen: true, files };
    }
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
    // Writing config.toml also creates CODEX_HOME, which Codex requires to exist.
    return { argv, env, secretEnv, stdinLines: [], keepStdinOpen: false, files };
  }

  initialState(permissionMode: PermissionMode, prompt?: string): ParseState {
    return freshState(permissionMode, prompt);
  }

  parseLine(line: string, state: ParseState): ParseStep {
    const event = parseJsonLine(line);
    if (event === null) return { state, outputs: [] };
    if (state.permissionMode === 'always_ask') return parseAppServerLine(event, state);
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

  answerConfirmation(pending: PendingConfirmation, decision: ConfirmationDecision): string {
    return answerAppServerApproval(pending, decision);
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
        // A custom tool call's result is the client's own, already in the session: only the call is shown.
        return { state: started.state, outputs: [...started.outputs, ...toolResultOutput(started.state, { tool_use_id: toolUse.tool_use_id, ...toolResultOf(item) })] };
      }
    }
  }
}

/** A TOML basic string. */
function tomlString(value: string): string {
  return JSON.stringify(value);
}
