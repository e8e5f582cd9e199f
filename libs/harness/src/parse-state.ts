import type { AgentOutput, PermissionMode, Usage } from '@berth/contracts';

type ToolUseOutput = Extract<AgentOutput, { kind: 'tool_use' }>;

/**
 * What an adapter remembers between stdout lines of one turn. Plain JSON, so the runner can
 * store it with its output offset and resume parsing after a restart.
 */
export interface ParseState {
  readonly permissionMode: PermissionMode;
  readonly sessionId: string | null;
  /** Tool uses seen but not emitted yet: in `always_ask` we wait to learn whether the harness asks. */
  readonly held: readonly ToolUseOutput[];
  /** Tool use ids already emitted (so a later sighting of the same call is not emitted twice). */
  readonly emitted: readonly string[];
  /** Token usage summed over this turn's model calls, for harnesses that report it per call. */
  readonly usage: Usage;
  /** The last error the harness reported before its terminal line. */
  readonly lastError: string | null;
}

export const ZERO_USAGE: Usage = { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };

export function freshState(permissionMode: PermissionMode): ParseState {
  return { permissionMode, sessionId: null, held: [], emitted: [], usage: ZERO_USAGE, lastError: null };
}

export function addUsage(a: Usage, b: Partial<Usage>): Usage {
  return {
    input_tokens: a.input_tokens + (b.input_tokens ?? 0),
    output_tokens: a.output_tokens + (b.output_tokens ?? 0),
    cache_creation_input_tokens: a.cache_creation_input_tokens + (b.cache_creation_input_tokens ?? 0),
    cache_read_input_tokens: a.cache_read_input_tokens + (b.cache_read_input_tokens ?? 0),
  };
}

/** Emits a tool use once; returns the outputs to add and the new state. */
export function emitToolUse(state: ParseState, toolUse: ToolUseOutput): { state: ParseState; outputs: AgentOutput[] } {
  if (state.emitted.includes(toolUse.tool_use_id)) return { state, outputs: [] };
  return { state: { ...state, emitted: [...state.emitted, toolUse.tool_use_id] }, outputs: [toolUse] };
}
