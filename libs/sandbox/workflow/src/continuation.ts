import type { AgentOutput } from '@berth/contracts';

/** A tool call the harness asked about, as the journal recorded it: what a re-issued call must match. */
export type AskedCall = Readonly<{ name: string; mcp_server_name: string | null; input: Readonly<Record<string, unknown>> }>;

/** The user's answer to a tool call whose harness was released by a pause, carried into the harness that continues the turn. */
export type CarriedDecision = Readonly<{
  /** The tool use as the journal knows it (the id its `agent.tool_use` event maps). */
  harness_tool_use_id: string;
  call: AskedCall;
  result: 'allow' | 'deny';
  deny_message: string | null;
}>;

/**
 * A turn continued in a new harness after a pause: the answers to give the calls it re-issues, and
 * the seq of the `TurnResumed` that continued it (the outputs recorded before it came from the
 * harness that is gone: the continuing one numbers its outputs on after them).
 */
export type Continuation = Readonly<{ decisions: readonly CarriedDecision[]; resumed_at: number }>;

const stable = (value: unknown): string => {
  if (Array.isArray(value)) return `[${value.map(stable).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${stable(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
};

/** The same call: same tool (and MCP server) and the same input, whatever the key order. */
export const sameCall = (a: AskedCall, b: AskedCall): boolean => a.name === b.name && a.mcp_server_name === b.mcp_server_name && stable(a.input) === stable(b.input);

/** The call a tool-use output makes, or null for any other output. */
export function callOf(output: AgentOutput): (AskedCall & { tool_use_id: string }) | null {
  if (output.kind === 'tool_use') return { tool_use_id: output.tool_use_id, name: output.name, mcp_server_name: null, input: output.input };
  if (output.kind === 'mcp_tool_use') return { tool_use_id: output.tool_use_id, name: output.name, mcp_server_name: output.server_name, input: output.input };
  return null;
}

const describe = (call: AskedCall): string => `${call.mcp_server_name === null ? call.name : `${call.mcp_server_name}/${call.name}`} ${JSON.stringify(call.input)}`;

/**
 * The input of the harness that continues a turn paused while it waited: its conversation is resumed
 * from the mirrored transcript, where the unanswered call was left out (Claude Code drops a tool use
 * without a result when it resumes), so the harness is told what the user decided. An approved call
 * it makes again (same tool, same input) is allowed without asking; any other call asks as usual.
 */
export function continuationPrompt(continuation: Continuation): string {
  const lines = continuation.decisions.map((d) =>
    d.result === 'allow'
      ? `- approved: ${describe(d.call)}. Make this call again now, exactly as before.`
      : `- denied: ${describe(d.call)}${d.deny_message ? ` (the user said: ${d.deny_message})` : ''}. Do not make it; go on without it.`,
  );
  return [
    '[Berth] This session was paused while your tool call waited for the user\'s confirmation; the call was not run. The user has answered:',
    ...lines,
    'Then continue the task where you left off.',
  ].join('\n');
}
