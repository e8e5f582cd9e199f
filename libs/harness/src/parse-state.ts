import type { AgentOutput, PermissionMode, Usage } from '@berth/contracts';

/** A call the harness makes: of a built-in tool, of a tool of an MCP server, or of one of the agent's custom tools. */
export type ToolCallOutput = Extract<AgentOutput, { kind: 'tool_use' | 'mcp_tool_use' | 'custom_tool_use' }>;

/**
 * What an adapter remembers between stdout lines of one turn. Plain JSON, so the runner can
 * store it with its output offset and resume parsing after a restart.
 */
export interface ParseState {
  readonly permissionMode: PermissionMode;
  /** The user message of this turn, for a harness whose protocol sends it only once it said which conversation it opened. */
  readonly prompt?: string;
  readonly sessionId: string | null;
  /** Tool uses seen but not emitted yet: in `always_ask` we wait to learn whether the harness asks. */
  readonly held: readonly ToolCallOutput[];
  /** Tool use ids already emitted (so a later sighting of the same call is not emitted twice). */
  readonly emitted: readonly string[];
  /** The emitted ids that are MCP tool calls: their results are `mcp_tool_result`. */
  readonly mcpCalls: readonly string[];
  /** The emitted ids that are custom tool calls: their results are the client's own, already recorded. Absent in states stored before custom tools. */
  readonly customCalls?: readonly string[];
  /** Token usage summed over this turn's model calls, for harnesses that report it per call. */
  readonly usage: Usage;
  /** The last error the harness reported before its terminal line. */
  readonly lastError: string | null;
}

export const ZERO_USAGE: Usage = { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };

export function freshState(permissionMode: PermissionMode, prompt?: string): ParseState {
  return { permissionMode, ...(prompt === undefined ? {} : { prompt }), sessionId: null, held: [], emitted: [], mcpCalls: [], usage: ZERO_USAGE, lastError: null };
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
export function emitToolUse(state: ParseState, toolUse: ToolCallOutput): { state: ParseState; outputs: AgentOutput[] } {
  if (state.emitted.includes(toolUse.tool_use_id)) return { state, outputs: [] };
  const mcpCalls = toolUse.kind === 'mcp_tool_use' ? [...state.mcpCalls, toolUse.tool_use_id] : state.mcpCalls;
  const customCalls = toolUse.kind === 'custom_tool_use' ? [...(state.customCalls ?? []), toolUse.tool_use_id] : state.customCalls;
  return { state: { ...state, emitted: [...state.emitted, toolUse.tool_use_id], mcpCalls, ...(customCalls === undefined ? {} : { customCalls }) }, outputs: [toolUse] };
}

/**
 * The result of an emitted call, as `tool_result` or `mcp_tool_result` after its call; none for a
 * custom tool call (its result is the client's `user.custom_tool_result`, already in the session).
 */
export function toolResultOutput(state: ParseState, result: Omit<Extract<AgentOutput, { kind: 'tool_result' }>, 'kind'>): AgentOutput[] {
  if (state.customCalls?.includes(result.tool_use_id) === true) return [];
  return [{ kind: state.mcpCalls.includes(result.tool_use_id) ? 'mcp_tool_result' : 'tool_result', ...result }];
}

/** A tool's public name: the toolset name (`bash`, …) when the harness tool is one of them, else the harness's own. */
export function publicToolName(harnessName: string, toolset: Readonly<Record<string, string>>): string {
  return toolset[harnessName] ?? harnessName;
}

type Step = { state: ParseState; outputs: AgentOutput[] };

/**
 * A tool use the harness is about to run. In `always_ask` it is held until the harness either asks
 * about it (`releaseToolUse(…, true)`) or shows its result without asking (`releaseToolUse(…, false)`:
 * a tool the harness never asks about, such as a read), so it is emitted once, marked right.
 */
export function holdToolUse(state: ParseState, toolUse: ToolCallOutput): Step {
  // A custom tool never asks: its call waits for the client's result, which is its own answer.
  if (state.permissionMode !== 'always_ask' || toolUse.kind === 'custom_tool_use') return emitToolUse(state, toolUse);
  if (state.emitted.includes(toolUse.tool_use_id) || state.held.some((t) => t.tool_use_id === toolUse.tool_use_id)) return { state, outputs: [] };
  return { state: { ...state, held: [...state.held, toolUse] }, outputs: [] };
}

/** Emits a held tool use (or `fallback` for one never seen), marked as waiting for confirmation or not. */
export function releaseToolUse(state: ParseState, toolUseId: string, needsConfirmation: boolean, fallback: ToolCallOutput): Step {
  const held = state.held.find((t) => t.tool_use_id === toolUseId);
  const rest = { ...state, held: state.held.filter((t) => t.tool_use_id !== toolUseId) };
  const call = held ?? fallback;
  return emitToolUse(rest, call.kind === 'custom_tool_use' ? call : { ...call, needs_confirmation: needsConfirmation });
}

/** At the turn's end, whatever is still held never asked and never ran (an interrupt): show it rather than lose it. */
export function releaseAllHeld(state: ParseState): Step {
  let next: ParseState = { ...state, held: [] };
  const outputs: AgentOutput[] = [];
  for (const held of state.held) {
    const step = emitToolUse(next, held);
    next = step.state;
    outputs.push(...step.outputs);
  }
  return { state: next, outputs };
}
