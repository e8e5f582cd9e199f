import { AGENT_TOOL_NAMES, permissionModeOf, resolveAgentTools, type AgentOutput, type AgentToolName, type PermissionMode } from '@berth/contracts';
import type { HarnessAdapter, ParseStep, TranscriptLocation, TurnInput, TurnPlan } from '../harness-adapter.port';
import { arr, contentBlocks, num, obj, parseJsonLine, str, textContent, type JsonObject } from '../json-line';
import type { ConfirmationDecision, PendingConfirmation } from '../harness-adapter.port';
import { addUsage, freshState, holdToolUse, publicToolName, releaseAllHeld, releaseToolUse, toolResultOutput, type ParseState, type ToolCallOutput } from '../parse-state';
import { PI_CUSTOM_TOOL_PREFIX, piCustomTools } from './pi-custom-tools';

/** Provider id written into Pi's models.json. */
const PROVIDER = 'berth';

/** Pi's built-in tools for each toolset tool it has (`--tools`); glob is its `find` and `ls`. */
export const PI_TOOL_NAMES: Readonly<Partial<Record<AgentToolName, readonly string[]>>> = {
  bash: ['bash'],
  edit: ['edit'],
  read: ['read'],
  write: ['write'],
  glob: ['find', 'ls'],
  grep: ['grep'],
};
const TOOLSET_NAMES: Readonly<Record<string, string>> = Object.fromEntries(
  Object.entries(PI_TOOL_NAMES).flatMap(([api, names]) => (names ?? []).map((name) => [name, api])),
);
/** Request id of the `get_state` we send first: its response carries the session id. */
const STATE_REQUEST = 'berth-state';
const PROMPT_REQUEST = 'berth-prompt';
/** Title of the extension UI request Berth's confirmation extension sends (its placeholder is the tool call id). */
const CONFIRMATION_TITLE = 'berth:tool_confirmation';

/**
 * Pi's own hook for holding a tool call (verified with pi 0.73.1): an extension's `tool_call`
 * handler runs before the tool and may block it. This one asks over the RPC extension-UI protocol
 * (`extension_ui_request` on stdout, `extension_ui_response` on stdin, no timeout) and blocks the
 * call unless the answer allows it; the deny message is what the model sees. An interrupt (abort)
 * while it waits resolves it as denied.
 */
export const PI_CONFIRM_EXTENSION = `// Written by Berth before every always_ask turn: holds each tool call for user.tool_confirmation.
export default function (pi: any) {
  pi.on('tool_call', async (event: any, ctx: any) => {
    // A custom tool never asks: its call waits for the client's result, which is its own answer.
    if (String(event.toolName).startsWith(${JSON.stringify(PI_CUSTOM_TOOL_PREFIX)})) return undefined;
    const answer = await ctx.ui.input(${JSON.stringify(CONFIRMATION_TITLE)}, event.toolCallId, { signal: ctx.signal });
    let decision: any = null;
    try {
      decision = JSON.parse(answer ?? '');
    } catch {
      decision = null;
    }
    if (decision?.result === 'allow') return undefined;
    return { block: true, reason: decision?.message ?? 'The user denied this tool use.' };
  });
}
`;

/**
 * Pi in RPC mode (`pi --mode rpc`): JSON commands on stdin (`get_state`, then `prompt`), agent
 * events on stdout; `agent_end` ends the turn, `{"type":"abort"}` interrupts it. The model is a
 * custom provider in `~/.pi/agent/models.json` speaking the Anthropic Messages API. For an agent
 * whose tools ask (all of them: `HARNESS_SUPPORT.pi.confirmation`) Berth's extension
 * (`PI_CONFIRM_EXTENSION`, loaded with `-e`, discovery off) holds every tool call until it is
 * answered. Pi has no MCP client: the API refuses MCP servers for Pi; the agent's custom tools are
 * tools of Berth's second extension (`piCustomTools`), which forward each call to the platform.
 */
export class PiAdapter implements HarnessAdapter {
  readonly kind = 'pi' as const;
  readonly capabilities = { interruptOnStdin: true, modelKeyHeader: 'x-api-key' as const };

  buildTurn(input: TurnInput): TurnPlan {
    const { agent } = input;
    const ask = permissionModeOf(agent) === 'always_ask';
    const extension = `${input.home}/.berth/pi/berth-confirm.ts`;
    const model = agent.model.id;
    const tools = resolveAgentTools(agent);
    const custom = piCustomTools(agent, input.home);
    // `--tools` allows extension tools too: the custom ones are named in it.
    const enabled = [...AGENT_TOOL_NAMES.flatMap((name) => (tools.builtin[name].enabled ? (PI_TOOL_NAMES[name] ?? []) : [])), ...(custom?.toolNames ?? [])];
    const modelsJson = {
      providers: {
        [PROVIDER]: {
          baseUrl: input.model.baseUrl,
          api: 'anthropic-messages',
          // Pi resolves an all-caps value as the name of an environment variable: the key stays out of the file.
          apiKey: input.model.apiKeyEnv,
          models: [{ id: model, reasoning: true }],
        },
      },
    };
    return {
      argv: [
        'pi',
        '--mode',
        'rpc',
        '--provider',
        PROVIDER,
        '--model',
        model,
        ...(agent.model.effort ? ['--thinking', agent.model.effort.type] : []),
        // An allowlist of exactly the agent's tools; none at all is `--no-tools`.
        ...(enabled.length > 0 ? ['--tools', enabled.join(',')] : ['--no-tools']),
        // Only Berth's hook: an extension the agent wrote into the workspace is not loaded when tools ask.
        ...(ask ? ['--no-extensions', '--extension', extension] : []),
        ...(custom === null ? [] : ['--extension', custom.extension]),
        ...(agent.system ? ['--append-system-prompt', agent.system] : []),
        ...(input.resumeId === null ? [] : ['--session', input.resumeId]),
      ],
      env: { HOME: input.home, PI_OFFLINE: '1' },
      secretEnv: { [input.model.apiKeyEnv]: input.model.apiKeyEnv },
      stdinLines: [
        JSON.stringify({ id: STATE_REQUEST, type: 'get_state' }),
        JSON.stringify({ id: PROMPT_REQUEST, type: 'prompt', message: input.prompt }),
      ],
      keepStdinOpen: true,
      files: [
        { path: `${input.home}/.pi/agent/models.json`, content: `${JSON.stringify(modelsJson, null, 2)}\n` },
        // Rewritten before every turn: a tool the user allowed cannot leave a weakened hook for the next one.
        ...(ask ? [{ path: extension, content: PI_CONFIRM_EXTENSION }] : []),
        ...(custom?.files ?? []),
      ],
    };
  }

  initialState(permissionMode: PermissionMode): ParseState {
    return freshState(permissionMode);
  }

  parseLine(line: string, state: ParseState): ParseStep {
    const event = parseJsonLine(line);
    if (event === null) return { state, outputs: [] };
    switch (event['type']) {
      case 'response':
        return this.response(event, state);
      case 'message_end':
        return this.messageEnd(obj(event['message']), state);
      case 'tool_execution_start': {
        const id = str(event['toolCallId']);
        if (id === undefined) return { state, outputs: [] };
        return holdToolUse(state, toolUseOf(id, event['toolName'], event['args']));
      }
      case 'extension_ui_request':
        return this.confirmationRequest(event, state);
      case 'tool_execution_end': {
        const id = str(event['toolCallId']) ?? '';
        const released = releaseToolUse(state, id, false, toolUseOf(id, event['toolName'], event['args']));
        return {
          state: released.state,
          outputs: [
            ...released.outputs,
            ...toolResultOutput(released.state, { tool_use_id: id, content: contentBlocks(obj(event['result'])['content']), is_error: event['isError'] === true }),
          ],
        };
      }
      case 'agent_end':
        return this.agentEnd(event, state);
      default:
        return { state, outputs: [] };
    }
  }

  answerConfirmation(pending: PendingConfirmation, decision: ConfirmationDecision): string {
    const value = decision.result === 'allow' ? { result: 'allow' } : { result: 'deny', message: decision.denyMessage ?? 'The user denied this tool use.' };
    return JSON.stringify({ type: 'extension_ui_response', id: pending.requestId, value: JSON.stringify(value) });
  }

  interruptLine(): string {
    return JSON.stringify({ type: 'abort' });
  }

  /** Berth's extension asks about a tool call: the call is emitted as waiting, and the request is what the answer names. */
  private confirmationRequest(event: JsonObject, state: ParseState): ParseStep {
    const requestId = str(event['id']);
    const toolUseId = str(event['placeholder']);
    if (event['method'] !== 'input' || event['title'] !== CONFIRMATION_TITLE || requestId === undefined || toolUseId === undefined) return { state, outputs: [] };
    const released = releaseToolUse(state, toolUseId, true, toolUseOf(toolUseId, undefined, undefined));
    const toolUse = released.outputs.find((o) => o.kind === 'tool_use') ?? state.held.find((t) => t.tool_use_id === toolUseId);
    return { ...released, confirmation: { toolUseId, requestId, input: toolUse?.kind === 'tool_use' ? toolUse.input : {} } };
  }

  transcriptLocations(home: string, cwd: string, sessionId: string): readonly TranscriptLocation[] {
    return [{ dir: `${home}/.pi/agent/sessions/${piSessionDirName(cwd)}`, nameEndsWith: `_${sessionId}.jsonl`, recursive: false }];
  }

  private response(event: JsonObject, state: ParseState): ParseStep {
    if (event['id'] === STATE_REQUEST) {
      const sessionId = str(obj(event['data'])['sessionId']);
      return sessionId === undefined ? { state, outputs: [] } : { state: { ...state, sessionId }, outputs: [], harnessSessionId: sessionId };
    }
    if (event['id'] === PROMPT_REQUEST && event['success'] === false) {
      return { state, outputs: [], terminal: { ok: false, interrupted: false, error: str(event['error']) ?? 'pi rejected the prompt' } };
    }
    return { state, outputs: [] };
  }

  private messageEnd(message: JsonObject, initial: ParseState): ParseStep {
    if (message['role'] !== 'assistant') return { state: initial, outputs: [] };
    let state = initial;
    const outputs: AgentOutput[] = [];
    for (const raw of arr(message['content'])) {
      const block = obj(raw);
      if (block['type'] === 'thinking') outputs.push({ kind: 'thinking' });
      if (block['type'] === 'text' && str(block['text'])) outputs.push({ kind: 'message', content: textContent(block['text'] as string) });
      if (block['type'] === 'toolCall' && str(block['id'])) {
        const step = holdToolUse(state, toolUseOf(block['id'] as string, block['name'], block['arguments']));
        state = step.state;
        outputs.push(...step.outputs);
      }
    }
    const usage = obj(message['usage']);
    state = {
      ...state,
      usage: addUsage(state.usage, {
        input_tokens: num(usage['input']),
        output_tokens: num(usage['output']),
        cache_read_input_tokens: num(usage['cacheRead']),
        cache_creation_input_tokens: num(usage['cacheWrite']),
      }),
      lastError: message['stopReason'] === 'error' ? (str(message['errorMessage']) ?? 'model error') : state.lastError,
    };
    return { state, outputs };
  }

  private agentEnd(event: JsonObject, initial: ParseState): ParseStep {
    const { state, outputs: unasked } = releaseAllHeld(initial);
    const last = obj(arr(event['messages']).filter((m) => obj(m)['role'] === 'assistant').at(-1));
    const interrupted = last['stopReason'] === 'aborted';
    const failed = last['stopReason'] === 'error';
    return {
      state,
      outputs: [...unasked, { kind: 'usage', usage: state.usage }],
      terminal: { ok: !failed, interrupted, error: failed ? (str(last['errorMessage']) ?? state.lastError ?? 'model error') : null },
    };
  }
}

/** A Pi tool call: of a custom tool (Berth's extension), or of a Pi tool, under its toolset name when it is one of the toolset's. */
function toolUseOf(id: string, name: unknown, input: unknown): ToolCallOutput {
  const piName = str(name) ?? 'unknown';
  if (piName.startsWith(PI_CUSTOM_TOOL_PREFIX)) return { kind: 'custom_tool_use', tool_use_id: id, name: piName.slice(PI_CUSTOM_TOOL_PREFIX.length), input: { ...obj(input) } };
  return { kind: 'tool_use', tool_use_id: id, name: publicToolName(piName, TOOLSET_NAMES), input: { ...obj(input) }, needs_confirmation: false };
}

/** Pi files sessions under `sessions/--<cwd with separators as "-">--/`. */
export function piSessionDirName(cwd: string): string {
  return `--${cwd.replace(/^[/\\]/, '').replace(/[/\\:]/g, '-')}--`;
}
