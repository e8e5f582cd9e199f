import { AGENT_TOOL_NAMES, resolveAgentTools, type AgentOutput, type AgentToolName, type PermissionMode } from '@berth/contracts';
import type { HarnessAdapter, ParseStep, TranscriptLocation, TurnInput, TurnPlan } from '../harness-adapter.port';
import { arr, contentBlocks, num, obj, parseJsonLine, str, textContent, type JsonObject } from '../json-line';
import { addUsage, emitToolUse, freshState, publicToolName, toolResultOutput, type ParseState } from '../parse-state';

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

/**
 * Pi in RPC mode (`pi --mode rpc`): JSON commands on stdin (`get_state`, then `prompt`), agent
 * events on stdout; `agent_end` ends the turn, `{"type":"abort"}` interrupts it. The model is a
 * custom provider in `~/.pi/agent/models.json` speaking the Anthropic Messages API. Pi has no
 * permission prompts and no MCP client: the API refuses `always_ask` and MCP servers for Pi.
 */
export class PiAdapter implements HarnessAdapter {
  readonly kind = 'pi' as const;
  readonly capabilities = { interruptOnStdin: true };

  buildTurn(input: TurnInput): TurnPlan {
    const { agent } = input;
    const model = agent.model.id;
    const tools = resolveAgentTools(agent);
    const enabled = AGENT_TOOL_NAMES.flatMap((name) => (tools.builtin[name].enabled ? (PI_TOOL_NAMES[name] ?? []) : []));
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
      files: [{ path: `${input.home}/.pi/agent/models.json`, content: `${JSON.stringify(modelsJson, null, 2)}\n` }],
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
        return emitToolUse(state, { kind: 'tool_use', tool_use_id: id, name: publicToolName(str(event['toolName']) ?? 'unknown', TOOLSET_NAMES), input: { ...obj(event['args']) }, needs_confirmation: false });
      }
      case 'tool_execution_end':
        return {
          state,
          outputs: [toolResultOutput(state, { tool_use_id: str(event['toolCallId']) ?? '', content: contentBlocks(obj(event['result'])['content']), is_error: event['isError'] === true })],
        };
      case 'agent_end':
        return this.agentEnd(event, state);
      default:
        return { state, outputs: [] };
    }
  }

  answerConfirmation(): null {
    return null;
  }

  interruptLine(): string {
    return JSON.stringify({ type: 'abort' });
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
        const step = emitToolUse(state, {
          kind: 'tool_use',
          tool_use_id: block['id'] as string,
          name: publicToolName(str(block['name']) ?? 'unknown', TOOLSET_NAMES),
          input: { ...obj(block['arguments']) },
          needs_confirmation: false,
        });
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

  private agentEnd(event: JsonObject, state: ParseState): ParseStep {
    const last = obj(arr(event['messages']).filter((m) => obj(m)['role'] === 'assistant').at(-1));
    const interrupted = last['stopReason'] === 'aborted';
    const failed = last['stopReason'] === 'error';
    return {
      state,
      outputs: [{ kind: 'usage', usage: state.usage }],
      terminal: { ok: !failed, interrupted, error: failed ? (str(last['errorMessage']) ?? state.lastError ?? 'model error') : null },
    };
  }
}

/** Pi files sessions under `sessions/--<cwd with separators as "-">--/`. */
export function piSessionDirName(cwd: string): string {
  return `--${cwd.replace(/^[/\\]/, '').replace(/[/\\:]/g, '-')}--`;
}
