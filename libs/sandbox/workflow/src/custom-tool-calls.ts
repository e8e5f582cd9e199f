import type { ToolResultContent } from '@berth/contracts';
import type { SessionView } from './session-view';

/** A custom tool call as the in-sandbox server asks about it: the harness's tool-use id when its MCP client names it. */
export type CustomToolCallQuery = Readonly<{ tool_use_id: string | null; name: string; input: Readonly<Record<string, unknown>> }>;

/** What to tell the server now: the client's result, to keep waiting, or that the call's turn is over. */
export type CustomToolCallLookup =
  | Readonly<{ kind: 'answer'; event_id: string; content: ToolResultContent; is_error: boolean }>
  | Readonly<{ kind: 'wait' }>
  | Readonly<{ kind: 'ended'; message: string }>;

/** Key order does not matter when a call is matched by its input. */
const canonical = (value: unknown): string =>
  JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => a.localeCompare(b))) : v,
  );

/**
 * The answer to one call of the in-sandbox server, from the session's view (so it is the same
 * after a manager restart: the result is in the journal). A call that names its tool-use id gets
 * that call's result; one that does not is matched, in order, to an answered call of the same
 * name and input that no other connection was handed (`handedOut`). A call may be asked about
 * before its `agent.custom_tool_use` is in the journal (the harness's stdout is batched): it waits.
 * Once the call's turn is over (settled, or another turn runs) it is told so.
 */
export function lookUpCustomToolCall(view: SessionView, query: CustomToolCallQuery, handedOut: ReadonlySet<string>): CustomToolCallLookup {
  const turn = view.turn;
  // An interrupt is left to the harness (it cancels its call): an error answered first would let the model go on before it stops.
  if (turn === null) return { kind: 'ended', message: 'the turn of this custom tool call has ended' };
  const call =
    query.tool_use_id !== null
      ? turn.custom_calls.find((c) => c.harness_tool_use_id === query.tool_use_id)
      : turn.custom_calls.find((c) => c.result !== null && !handedOut.has(c.event_id) && c.name === query.name && canonical(c.input) === canonical(query.input));
  if (call === undefined || call.result === null) return { kind: 'wait' };
  return { kind: 'answer', event_id: call.event_id, content: call.result.content, is_error: call.result.is_error };
}
