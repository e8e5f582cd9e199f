import type { AgentOutput, PermissionMode } from '@berth/contracts';
import type { HarnessAdapter, ParseStep, TranscriptLocation, TurnInput, TurnPlan } from '../harness-adapter.port';
import { contentBlocks, num, obj, parseJsonLine, str, textContent, type JsonObject } from '../json-line';
import { emitToolUse, freshState, type ParseState } from '../parse-state';
import { statusTurnEnd } from '../status-turn-end';
const OPEN_REQUEST = 1;
const PROMPT_REQUEST = 2;

/**
 * Hermes Agent (NousResearch) through its TUI gateway, spoken as JSON-RPC 2.0 lines over stdio.
 * ASSUMED protocol (Hermes cannot be installed here; see docs/harnesses.md): `session.create` or
 * `session.resume` (result carries `session_id`), then `prompt.submit`; the gateway notifies
 * `event` messages whose `params.type` is `reasoning.complete`, `message.complete`,
 * `tool.start`, `tool.complete`, `turn.complete` or `error`. Tested against recorded fixtures only.
 */
export class HermesAdapter implements HarnessAdapter {
  readonly kind = 'hermes' as const;
  readonly capabilities = { interruptOnStdin: true, modelKeyHeader: 'bearer' as const };

  buildTurn(input: TurnInput): TurnPlan {
    const open =
      input.resumeId === null
        ? { jsonrpc: '2.0', id: OPEN_REQUEST, method: 'session.create', params: { cwd: input.cwd } }
        : { jsonrpc: '2.0', id: OPEN_REQUEST, method: 'session.resume', params: { session_id: input.resumeId, cwd: input.cwd } };
    const config = [
      'model:',
      `  default: ${JSON.stringify(input.agent.model.id)}`,
      '  provider: custom',
      `  base_url: ${JSON.stringify(`${input.model.baseUrl}/v1`)}`,
      '',
    ].join('\n');
    return {
      argv: ['python', '-m', 'tui_gateway.entry'],
      env: { HOME: input.home, HERMES_HOME: `${input.home}/.hermes` },
      secretEnv: { OPENAI_API_KEY: input.model.apiKeyEnv },
      stdinLines: [JSON.stringify(open), JSON.stringify({ jsonrpc: '2.0', id: PROMPT_REQUEST, method: 'prompt.submit', params: { text: input.prompt } })],
      keepStdinOpen: true,
      files: [
        { path: `${input.home}/.hermes/config.yaml`, content: config },
        // Hermes reads its persona from SOUL.md.
        ...(input.agent.system ? [{ path: `${input.home}/.hermes/SOUL.md`, content: `${input.agent.system}\n` }] : []),
      ],
    };
  }

  initialState(permissionMode: PermissionMode): ParseState {
    return freshState(permissionMode);
  }

  parseLine(line: string, state: ParseState): ParseStep {
    const message = parseJsonLine(line);
    if (message === null) return { state, outputs: [] };
    if (message['id'] !== undefined) return this.response(message, state);
    if (message['method'] !== 'event') return { state, outputs: [] };
    return this.event(obj(message['params']), state);
  }

  answerConfirmation(): null {
    return null;
  }

  interruptLine(): string {
    return JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'session.interrupt', params: {} });
  }

  transcriptLocations(home: string, _cwd: string, sessionId: string): readonly TranscriptLocation[] {
    return [{ dir: `${home}/.hermes/sessions`, nameEndsWith: `${sessionId}.jsonl`, recursive: false }];
  }

  private response(message: JsonObject, state: ParseState): ParseStep {
    const error = obj(message['error']);
    if (str(error['message']) !== undefined) {
      return { state, outputs: [], terminal: { ok: false, interrupted: false, error: error['message'] as string } };
    }
    const sessionId = str(obj(message['result'])['session_id']);
    if (message['id'] !== OPEN_REQUEST || sessionId === undefined) return { state, outputs: [] };
    return { state: { ...state, sessionId }, outputs: [], harnessSessionId: sessionId };
  }

  private event(event: JsonObject, state: ParseState): ParseStep {
    switch (event['type']) {
      case 'reasoning.complete':
        return { state, outputs: [{ kind: 'thinking' }] };
      case 'message.complete':
        return { state, outputs: str(event['text']) ? [{ kind: 'message', content: textContent(event['text'] as string) }] : [] };
      case 'tool.start':
        return emitToolUse(state, {
          kind: 'tool_use',
          tool_use_id: str(event['tool_id']) ?? '',
          name: str(event['name']) ?? 'unknown',
          input: { ...obj(event['args']) },
          needs_confirmation: false,
        });
      case 'tool.complete': {
        const result: AgentOutput = {
          kind: 'tool_result',
          tool_use_id: str(event['tool_id']) ?? '',
          content: contentBlocks(event['result']),
          is_error: event['is_error'] === true,
        };
        return { state, outputs: [result] };
      }
      case 'error':
        return { state: { ...state, lastError: str(event['message']) ?? state.lastError }, outputs: [] };
      case 'turn.complete': {
        const usage = obj(event['usage']);
        return statusTurnEnd(
          state,
          str(event['status']),
          {
            input_tokens: num(usage['input_tokens']),
            output_tokens: num(usage['output_tokens']),
            cache_creation_input_tokens: 0,
            cache_read_input_tokens: num(usage['cache_read_tokens']),
          },
          str(event['error']),
        );
      }
      default:
        return { state, outputs: [] };
    }
  }
}
