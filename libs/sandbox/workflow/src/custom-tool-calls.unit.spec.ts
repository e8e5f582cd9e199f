import { lookUpCustomToolCall } from './custom-tool-calls';
import { emptySessionView, foldSessionEvent, type SessionView } from './session-view';
import { startedTurn, TURN } from './testing/manager-fixtures';
import type { ManagerInput } from './inputs';

const viewOf = (history: readonly ManagerInput[]): SessionView =>
  history.reduce((v, input) => (input.kind === 'event' ? foldSessionEvent(v, input.event) : v), emptySessionView());

/** Two calls of get_weather with the same input (toolu_a, toolu_b) and one of get_time; `answer` records a result for one. */
function calls() {
  const { j, history } = startedTurn();
  const use = (id: string, name: string, input: Record<string, unknown>) => {
    history.push(j.event('AgentCustomToolUseRecorded', { turn_id: TURN, offset: history.length, harness_tool_use_id: id, name, input }));
    return j.lastId();
  };
  const a = use('toolu_a', 'get_weather', { city: 'Oslo', unit: 'C' });
  const b = use('toolu_b', 'get_weather', { city: 'Oslo', unit: 'C' });
  const t = use('toolu_t', 'get_time', {});
  const answer = (eventId: string, harnessId: string, text: string) =>
    history.push(j.event('CustomToolResultReceived', { turn_id: TURN, custom_tool_use_event_id: eventId, harness_tool_use_id: harnessId, content: [{ type: 'text', text }], is_error: false }));
  return { j, history, a, b, t, answer };
}

describe('lookUpCustomToolCall', () => {
  it('waits until the named call has its result, then answers with it', () => {
    const { history, a, answer } = calls();
    const query = { tool_use_id: 'toolu_a', name: 'get_weather', input: { city: 'Oslo', unit: 'C' } };
    expect(lookUpCustomToolCall(viewOf(history), query, new Set())).toEqual({ kind: 'wait' });
    answer(a, 'toolu_a', 'sunny');
    expect(lookUpCustomToolCall(viewOf(history), query, new Set())).toEqual({ kind: 'answer', event_id: a, content: [{ type: 'text', text: 'sunny' }], is_error: false });
  });

  it('waits for a call the journal does not show yet (the harness asked before its stdout was recorded)', () => {
    const { history } = calls();
    expect(lookUpCustomToolCall(viewOf(history), { tool_use_id: 'toolu_later', name: 'get_weather', input: {} }, new Set())).toEqual({ kind: 'wait' });
  });

  it('without a tool-use id, matches an answered call of the same name and input (any key order), one connection each', () => {
    const { history, a, b, answer } = calls();
    answer(b, 'toolu_b', 'second');
    answer(a, 'toolu_a', 'first');
    const query = { tool_use_id: null, name: 'get_weather', input: { unit: 'C', city: 'Oslo' } };
    const first = lookUpCustomToolCall(viewOf(history), query, new Set());
    expect(first).toMatchObject({ kind: 'answer', event_id: a });
    expect(lookUpCustomToolCall(viewOf(history), query, new Set([a]))).toMatchObject({ kind: 'answer', event_id: b });
    expect(lookUpCustomToolCall(viewOf(history), query, new Set([a, b]))).toEqual({ kind: 'wait' });
    expect(lookUpCustomToolCall(viewOf(history), { ...query, input: { city: 'Bergen', unit: 'C' } }, new Set())).toEqual({ kind: 'wait' });
  });

  it('keeps an interrupted call waiting (the harness cancels it), and tells it once its turn is over', () => {
    const { j, history } = calls();
    const query = { tool_use_id: 'toolu_t', name: 'get_time', input: {} };
    history.push(j.event('InterruptRequested', { turn_id: TURN }));
    expect(lookUpCustomToolCall(viewOf(history), query, new Set())).toEqual({ kind: 'wait' });
    history.push(j.event('TurnCompleted', { turn_id: TURN, interrupted: true }));
    expect(lookUpCustomToolCall(viewOf(history), query, new Set())).toMatchObject({ kind: 'ended' });
  });
});
