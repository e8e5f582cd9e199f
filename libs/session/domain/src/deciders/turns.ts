import { eventIdFor, type AgentOutput, type SessionCommandOf, type SessionEvent } from '@berth/contracts';
import { requireExists } from '../guards';
import type { CurrentTurn, SessionState } from '../state';
import { evolve } from '../evolve';
import { failTurn, pausedNow, settleTurn } from './turn-flow';

/**
 * Harness output is fenced by turn id and sandbox generation: output from another turn or an older
 * sandbox changes nothing. Outputs at offsets already recorded are skipped, so re-reading the
 * harness output file after a crash never duplicates an event.
 */
const currentTurnOn = (state: SessionState, turnId: string, generation: number): CurrentTurn | null => {
  const turn = state.current_turn;
  if (turn === null || turn.id !== turnId) return null;
  if (state.sandbox === null || state.runtime_unavailable || state.sandbox.generation !== generation) return null;
  return turn;
};

export function decideRecordAgentOutput(command: SessionCommandOf<'RecordAgentOutput'>, state: SessionState): SessionEvent[] {
  requireExists(state, command.meta.session_id);
  const { turn_id, generation, offset, outputs, harness_session_id } = command.data;
  const turn = currentTurnOn(state, turn_id, generation);
  if (turn === null) return [];
  const fresh = outputs.map((output, i) => ({ output, at: offset + i })).filter(({ at }) => at > turn.last_offset);
  const events: SessionEvent[] = [];
  if (harness_session_id !== null && harness_session_id !== state.harness_session_id) {
    events.push({ type: 'HarnessSessionRecorded', data: { turn_id, harness_session_id } });
  }
  const toolUseIds: Record<string, string> = { ...turn.tool_use_event_ids };
  const asks: string[] = [];
  let usage = state.usage;
  for (const { output, at } of fresh) {
    const event = outputEvent(output, turn_id, at, toolUseIds, usage);
    if (event.type === 'AgentToolUseRecorded' || event.type === 'AgentMcpToolUseRecorded' || event.type === 'AgentCustomToolUseRecorded') {
      const id = eventIdFor(command.meta.command_id, events.length);
      toolUseIds[event.data.harness_tool_use_id] = id;
      if (event.type === 'AgentCustomToolUseRecorded' || event.data.evaluated_permission === 'ask') asks.push(id);
    }
    if (event.type === 'UsageRecorded') usage = event.data.usage;
    events.push(event);
  }
  if (asks.length > 0) {
    events.push({ type: 'TurnAwaitingConfirmation', data: { turn_id, event_ids: [...turn.pending_confirmations, ...asks] } });
    // A pause asked for while the turn ran happens now that it waits for the user.
    if (state.pause_requested) events.push(pausedNow(events.reduce<SessionState>(evolve, state)));
  }
  return events;
}

/** Usage outputs report one model response; the event carries the session's cumulative total. */
function outputEvent(output: AgentOutput, turn_id: string, offset: number, toolUseIds: Record<string, string>, usage: SessionState['usage']): SessionEvent {
  switch (output.kind) {
    case 'message':
      return { type: 'AgentMessageRecorded', data: { turn_id, offset, content: output.content } };
    case 'thinking':
      return { type: 'AgentThinkingRecorded', data: { turn_id, offset } };
    case 'tool_use':
      return {
        type: 'AgentToolUseRecorded',
        data: {
          turn_id,
          offset,
          harness_tool_use_id: output.tool_use_id,
          name: output.name,
          input: output.input,
          evaluated_permission: output.needs_confirmation ? 'ask' : 'allow',
        },
      };
    case 'tool_result':
      return {
        type: 'AgentToolResultRecorded',
        data: { turn_id, offset, tool_use_event_id: toolUseIds[output.tool_use_id] ?? null, content: output.content, is_error: output.is_error },
      };
    case 'mcp_tool_use':
      return {
        type: 'AgentMcpToolUseRecorded',
        data: {
          turn_id,
          offset,
          harness_tool_use_id: output.tool_use_id,
          mcp_server_name: output.server_name,
          name: output.name,
          input: output.input,
          evaluated_permission: output.needs_confirmation ? 'ask' : 'allow',
        },
      };
    case 'mcp_tool_result':
      return {
        type: 'AgentMcpToolResultRecorded',
        data: { turn_id, offset, mcp_tool_use_event_id: toolUseIds[output.tool_use_id] ?? null, content: output.content, is_error: output.is_error },
      };
    case 'custom_tool_use':
      return { type: 'AgentCustomToolUseRecorded', data: { turn_id, offset, harness_tool_use_id: output.tool_use_id, name: output.name, input: output.input } };
    case 'usage':
      return {
        type: 'UsageRecorded',
        data: {
          turn_id,
          offset,
          usage: {
            input_tokens: usage.input_tokens + output.usage.input_tokens,
            output_tokens: usage.output_tokens + output.usage.output_tokens,
            cache_creation_input_tokens: usage.cache_creation_input_tokens + output.usage.cache_creation_input_tokens,
            cache_read_input_tokens: usage.cache_read_input_tokens + output.usage.cache_read_input_tokens,
          },
        },
      };
  }
}

/** The harness finished the turn on the current sandbox; the next queued message starts. */
export function decideCompleteTurn(command: SessionCommandOf<'CompleteTurn'>, state: SessionState): SessionEvent[] {
  requireExists(state, command.meta.session_id);
  const { turn_id, generation, interrupted, harness_session_id, checkpoint } = command.data;
  if (currentTurnOn(state, turn_id, generation) === null) return [];
  const recorded: SessionEvent[] =
    harness_session_id !== null && harness_session_id !== state.harness_session_id
      ? [{ type: 'HarnessSessionRecorded', data: { turn_id, harness_session_id } }]
      : [];
  const message_event_id = state.turn_messages[turn_id]?.event_id ?? null;
  const checkpointed: SessionEvent[] = checkpoint !== undefined ? [{ type: 'TurnCheckpointed', data: { turn_id, message_event_id, ...checkpoint } }] : [];
  return [...recorded, ...checkpointed, ...settleTurn(state, { type: 'TurnCompleted', data: { turn_id, interrupted } })];
}

/** The turn cannot finish. Fenced by turn id only: any reporter may settle the current turn. */
export function decideFailTurn(command: SessionCommandOf<'FailTurn'>, state: SessionState): SessionEvent[] {
  requireExists(state, command.meta.session_id);
  const { turn_id, reason, message } = command.data;
  if (state.current_turn?.id !== turn_id) return [];
  return failTurn(state, turn_id, reason, message);
}

/** The reconciler finished the turn from durable evidence: it completes like any other turn. */
export function decideRecoverTurn(command: SessionCommandOf<'RecoverTurn'>, state: SessionState): SessionEvent[] {
  requireExists(state, command.meta.session_id);
  const { turn_id, method } = command.data;
  if (state.current_turn?.id !== turn_id) return [];
  const recovered: SessionEvent = { type: 'TurnRecovered', data: { turn_id, method } };
  return [recovered, ...settleTurn(state, { type: 'TurnCompleted', data: { turn_id, interrupted: false } })];
}

/** The harness stopped without a terminal; the reconciler must recover the transcript. */
export function decideMarkTranscriptPending(command: SessionCommandOf<'MarkTranscriptPending'>, state: SessionState): SessionEvent[] {
  requireExists(state, command.meta.session_id);
  const turn = state.current_turn;
  if (turn === null || turn.id !== command.data.turn_id || turn.recovery_phase === 'TRANSCRIPT_PENDING') return [];
  return [{ type: 'TurnTranscriptPending', data: { turn_id: turn.id } }];
}
