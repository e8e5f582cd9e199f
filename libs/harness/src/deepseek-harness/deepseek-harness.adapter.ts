import { agentAsksForConfirmation, resolveAgentTools, type PermissionMode } from '@berth/contracts';
import type {
  ConfirmationDecision,
  HarnessAdapter,
  ParseStep,
  PendingConfirmation,
  TranscriptLocation,
  TurnInput,
  TurnPlan,
} from '../harness-adapter.port';
import { contentBlocks, num, obj, parseJsonLine, str, textContent, type JsonObject } from '../json-line';
import { emitToolUse, freshState, type ParseState } from '../parse-state';
import { statusTurnEnd } from '../status-turn-end';

/**
 * DeepSeek Harness (`dsh`), driven as one process per turn that prints its Thread/Turn/Item
 * runtime events as JSON lines. ASSUMED protocol (dsh cannot be installed here; see
 * docs/harnesses.md): `thread.started`, `reasoning.completed`, `message.completed`,
 * `approval.required` (answered on stdin with `approval.response`), `tool.started`,
 * `tool.completed`, `turn.completed` (status, usage) and `error`. Tested against fixtures only.
 */
export class DeepSeekHarnessAdapter implements HarnessAdapter {
  readonly kind = 'deepseek-harness' as const;
  readonly capabilities = { interruptOnStdin: true, modelKeyHeader: 'bearer' as const };

  buildTurn(input: TurnInput): TurnPlan {
    return {
      argv: [
        'dsh',
        'exec',
        '--json',
        `--model=${input.agent.model.id}`,
        // All tools ask or none do (the API refuses a mix for this harness).
        `--approval=${agentAsksForConfirmation(resolveAgentTools(input.agent)) ? 'ask' : 'auto'}`,
        ...(input.agent.system ? [`--instructions=${input.agent.system}`] : []),
        ...(input.resumeId === null ? [] : [`--thread=${input.resumeId}`]),
      ],
      env: { HOME: input.home, DEEPSEEK_BASE_URL: input.model.baseUrl },
      secretEnv: { DEEPSEEK_API_KEY: input.model.apiKeyEnv },
      stdinLines: [JSON.stringify({ type: 'user.message', text: input.prompt })],
      keepStdinOpen: true,
      files: [],
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
      case 'reasoning.completed':
        return { state, outputs: [{ kind: 'thinking' }] };
      case 'message.completed':
        return { state, outputs: str(event['text']) ? [{ kind: 'message', content: textContent(event['text'] as string) }] : [] };
      case 'approval.required':
        return this.approval(event, state);
      case 'tool.started':
        return emitToolUse(state, toolUse(event, false));
      case 'tool.completed':
        return {
          state,
          outputs: [{ kind: 'tool_result', tool_use_id: str(event['tool_call_id']) ?? '', content: contentBlocks(event['output']), is_error: event['is_error'] === true }],
        };
      case 'error':
        return { state: { ...state, lastError: str(event['message']) ?? state.lastError }, outputs: [] };
      case 'turn.completed':
        return this.turnCompleted(event, state);
      default:
        return { state, outputs: [] };
    }
  }

  answerConfirmation(pending: PendingConfirmation, decision: ConfirmationDecision): string {
    return JSON.stringify({
      type: 'approval.response',
      approval_id: pending.requestId,
      decision: decision.result === 'allow' ? 'approve' : 'deny',
      ...(decision.denyMessage === null ? {} : { message: decision.denyMessage }),
    });
  }

  interruptLine(): string {
    return JSON.stringify({ type: 'turn.interrupt' });
  }

  transcriptLocations(home: string, _cwd: string, sessionId: string): readonly TranscriptLocation[] {
    return [{ dir: `${home}/.dsh/threads`, nameEndsWith: `${sessionId}.jsonl`, recursive: false }];
  }

  private approval(event: JsonObject, state: ParseState): ParseStep {
    const requestId = str(event['approval_id']);
    const toolUseId = str(event['tool_call_id']);
    if (requestId === undefined || toolUseId === undefined) return { state, outputs: [] };
    const step = emitToolUse(state, toolUse(event, true));
    return { ...step, confirmation: { toolUseId, requestId, input: { ...obj(event['input']) } } };
  }

  private turnCompleted(event: JsonObject, state: ParseState): ParseStep {
    const usage = obj(event['usage']);
    return statusTurnEnd(
      state,
      str(event['status']),
      {
        input_tokens: num(usage['input_tokens']),
        output_tokens: num(usage['output_tokens']),
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: num(usage['cached_tokens']),
      },
      str(obj(event['error'])['message']),
    );
  }
}

function toolUse(event: JsonObject, needsConfirmation: boolean) {
  return {
    kind: 'tool_use' as const,
    tool_use_id: str(event['tool_call_id']) ?? '',
    name: str(event['name']) ?? 'unknown',
    input: { ...obj(event['input']) },
    needs_confirmation: needsConfirmation,
  };
}
