import { DeciderSpec } from '@berth/core/testing';
import { sessionDecider } from '../decide';
import { Cmd, historyOf, Out, partial, readySession, runningTurn } from '../testing/builders';

const spec = DeciderSpec.for(sessionDecider);
const hello = [{ type: 'text' as const, text: 'hello' }];

describe('SubmitUserMessage', () => {
  it('starts a turn when the conversation is idle', () => {
    spec.given(historyOf(...readySession())).when(Cmd.message('turn_1')).then([
      { type: 'UserMessageReceived', data: { turn_id: 'turn_1', content: hello, queued: false } },
      { type: 'TurnStarted', data: { turn_id: 'turn_1' } },
    ]);
  });

  it('starts a turn while the first sandbox is still starting (it runs once bound)', () => {
    spec.given(historyOf(Cmd.create())).when(Cmd.message('turn_1')).then([
      { type: 'UserMessageReceived', data: { turn_id: 'turn_1', content: hello, queued: false } },
      { type: 'TurnStarted', data: { turn_id: 'turn_1' } },
    ]);
  });

  it('asks for a rebuild first when the sandbox is gone', () => {
    spec.given(historyOf(...readySession(), Cmd.died(1))).when(Cmd.message('turn_1')).then([
      { type: 'SandboxRequested', data: { generation: 2, reason: 'rebuild' } },
      { type: 'UserMessageReceived', data: { turn_id: 'turn_1', content: hello, queued: false } },
      { type: 'TurnStarted', data: { turn_id: 'turn_1' } },
    ]);
  });

  it('does not ask twice for a rebuild already on its way', () => {
    spec.given(historyOf(...readySession(), Cmd.died(1), Cmd.message('turn_1'), Cmd.interrupt())).when(Cmd.message('turn_2')).then([
      { type: 'UserMessageReceived', data: { turn_id: 'turn_2', content: hello, queued: false } },
      { type: 'TurnStarted', data: { turn_id: 'turn_2' } },
    ]);
  });

  it('queues behind a running turn', () => {
    spec.given(historyOf(...runningTurn())).when(Cmd.message('turn_2')).then([
      { type: 'UserMessageReceived', data: { turn_id: 'turn_2', content: hello, queued: true } },
    ]);
  });

  it('is a no-op for a turn id it already has (running, queued or finished)', () => {
    spec.given(historyOf(...runningTurn())).when(Cmd.message('turn_1')).thenNothingHappened();
    spec.given(historyOf(...runningTurn(), Cmd.message('turn_2'))).when(Cmd.message('turn_2')).thenNothingHappened();
    spec.given(historyOf(...runningTurn(), Cmd.complete('turn_1'))).when(Cmd.message('turn_1')).thenNothingHappened();
  });

  it('refuses TERMINATED and DELETED sessions with AGENT_RUNTIME_ERROR', () => {
    spec.given(historyOf(...readySession(), Cmd.terminate())).when(Cmd.message('turn_1')).thenThrows('AGENT_RUNTIME_ERROR', 409);
    spec.given(historyOf(Cmd.create(), Cmd.delete())).when(Cmd.message('turn_1')).thenThrows('AGENT_RUNTIME_ERROR', 409);
  });

  it('refuses an archived session with SESSION_ARCHIVED', () => {
    spec.given(historyOf(...readySession(), Cmd.archive())).when(Cmd.message('turn_1')).thenThrows('SESSION_ARCHIVED', 409);
  });

  it('refuses a session that needs manual recovery with AGENT_RUNTIME_ERROR', () => {
    const manual = historyOf(...runningTurn(), Cmd.recover({ exists: false, running: false }));
    const err = spec.given(manual).when(Cmd.message('turn_2')).thenThrows('AGENT_RUNTIME_ERROR', 409);
    expect(err.details).toEqual({ recovery_reason: 'sandbox_missing' });
  });

  it('refuses an unknown session with NOT_FOUND', () => {
    spec.given([]).when(Cmd.message('turn_1')).thenThrows('NOT_FOUND', 404);
  });
});

describe('InterruptTurn', () => {
  it('asks the running turn to stop', () => {
    spec.given(historyOf(...runningTurn())).when(Cmd.interrupt()).then([{ type: 'InterruptRequested', data: { turn_id: 'turn_1' } }]);
  });

  it('settles at once a turn whose sandbox is gone (nothing to stop), then starts the queue', () => {
    spec.given(historyOf(...runningTurn(), Cmd.message('turn_2'), Cmd.died(1))).when(Cmd.interrupt()).then([
      { type: 'InterruptRequested', data: { turn_id: 'turn_1' } },
      { type: 'TurnCompleted', data: { turn_id: 'turn_1', interrupted: true } },
      { type: 'SandboxRequested', data: { generation: 2, reason: 'rebuild' } },
      { type: 'TurnStarted', data: { turn_id: 'turn_2' } },
    ]);
  });

  it('is a no-op with no turn, or a turn already being interrupted', () => {
    spec.given(historyOf(...readySession())).when(Cmd.interrupt()).thenNothingHappened();
    spec.given(historyOf(...runningTurn(), Cmd.interrupt())).when(Cmd.interrupt()).thenNothingHappened();
  });

  it('refuses a DELETED session with AGENT_RUNTIME_ERROR', () => {
    spec.given(historyOf(Cmd.create(), Cmd.delete())).when(Cmd.interrupt()).thenThrows('AGENT_RUNTIME_ERROR', 409);
  });
});

describe('ConfirmToolUse', () => {
  const asking = () => [...runningTurn(), Cmd.output('turn_1', 0, [Out.toolUse('toolu_a', true), Out.toolUse('toolu_b', true)], 1, null, 'cmd_ask')];

  it('confirms one of several pending tool uses; the turn keeps waiting for the rest', () => {
    spec.given(historyOf(...asking())).when(Cmd.confirm('sevt_ask_0')).then([
      { type: 'ToolUseConfirmed', data: { turn_id: 'turn_1', tool_use_event_id: 'sevt_ask_0', result: 'allow', deny_message: null } },
    ]);
  });

  it('resumes the turn when the last pending tool use is answered', () => {
    spec.given(historyOf(...asking(), Cmd.confirm('sevt_ask_0'))).when(Cmd.confirm('sevt_ask_1', 'deny', 'not that')).then([
      { type: 'ToolUseConfirmed', data: { turn_id: 'turn_1', tool_use_event_id: 'sevt_ask_1', result: 'deny', deny_message: 'not that' } },
      { type: 'TurnResumed', data: { turn_id: 'turn_1' } },
    ]);
  });

  it('is a no-op for a tool use already confirmed', () => {
    spec.given(historyOf(...asking(), Cmd.confirm('sevt_ask_0'))).when(Cmd.confirm('sevt_ask_0')).thenNothingHappened();
  });

  it('refuses a tool use that is not pending with TOOL_USE_NOT_PENDING', () => {
    spec.given(historyOf(...asking())).when(Cmd.confirm('sevt_nope_0')).thenThrows('TOOL_USE_NOT_PENDING', 409);
    spec.given(historyOf(...readySession())).when(Cmd.confirm('sevt_ask_0')).thenThrows('TOOL_USE_NOT_PENDING', 409);
  });

  it('refuses TERMINATED (AGENT_RUNTIME_ERROR) and unknown sessions (NOT_FOUND)', () => {
    spec.given(historyOf(...asking(), Cmd.terminate())).when(Cmd.confirm('sevt_ask_0')).thenThrows('AGENT_RUNTIME_ERROR', 409);
    spec.given([]).when(Cmd.confirm('sevt_ask_0')).thenThrows('NOT_FOUND', 404);
  });
});

describe('SubmitCustomToolResult', () => {
  const calling = () => [...runningTurn(), Cmd.output('turn_1', 0, [Out.customToolUse('toolu_c'), Out.customToolUse('toolu_d', 'get_time', {})], 1, null, 'cmd_call')];
  const sunny = [{ type: 'text' as const, text: 'sunny' }];

  it('a custom tool call is recorded and the turn waits on it (requires_action with its event id)', () => {
    spec.given(historyOf(...runningTurn())).when(Cmd.output('turn_1', 0, [Out.customToolUse('toolu_c')], 1, null, 'cmd_one')).then([
      { type: 'AgentCustomToolUseRecorded', data: { turn_id: 'turn_1', offset: 0, harness_tool_use_id: 'toolu_c', name: 'get_weather', input: { city: 'Oslo' } } },
      { type: 'TurnAwaitingConfirmation', data: { turn_id: 'turn_1', event_ids: ['sevt_one_0'] } },
    ]);
  });

  it('answers one of two pending calls; the turn keeps waiting for the other', () => {
    spec.given(historyOf(...calling())).when(Cmd.customResult('sevt_call_0')).then([
      { type: 'CustomToolResultReceived', data: { turn_id: 'turn_1', custom_tool_use_event_id: 'sevt_call_0', harness_tool_use_id: 'toolu_c', content: sunny, is_error: false } },
    ]);
  });

  it('resumes the turn when the last pending call is answered (an error result too)', () => {
    spec.given(historyOf(...calling(), Cmd.customResult('sevt_call_0'))).when(Cmd.customResult('sevt_call_1', 'no clock', true)).then([
      {
        type: 'CustomToolResultReceived',
        data: { turn_id: 'turn_1', custom_tool_use_event_id: 'sevt_call_1', harness_tool_use_id: 'toolu_d', content: [{ type: 'text', text: 'no clock' }], is_error: true },
      },
      { type: 'TurnResumed', data: { turn_id: 'turn_1' } },
    ]);
  });

  it('waits on a confirmation and a custom call together; neither answer stands in for the other', () => {
    const both = [...runningTurn(), Cmd.output('turn_1', 0, [Out.toolUse('toolu_a', true), Out.customToolUse('toolu_c')], 1, null, 'cmd_both')];
    const h = historyOf(...both);
    expect(h.at(-1)).toMatchObject({ type: 'TurnAwaitingConfirmation', data: { event_ids: ['sevt_both_0', 'sevt_both_1'] } });
    spec.given(h).when(Cmd.confirm('sevt_both_1')).thenThrows('TOOL_USE_NOT_PENDING', 409);
    spec.given(h).when(Cmd.customResult('sevt_both_0')).thenThrows('CUSTOM_TOOL_USE_NOT_PENDING', 409);
    spec.given(historyOf(...both, Cmd.confirm('sevt_both_0'))).when(Cmd.customResult('sevt_both_1')).thenMatches(
      partial([{ type: 'CustomToolResultReceived' }, { type: 'TurnResumed', data: { turn_id: 'turn_1' } }]),
    );
  });

  it('refuses a result for an already-answered call with CUSTOM_TOOL_USE_NOT_PENDING (answered)', () => {
    const err = spec.given(historyOf(...calling(), Cmd.customResult('sevt_call_0'))).when(Cmd.customResult('sevt_call_0', 'rain')).thenThrows('CUSTOM_TOOL_USE_NOT_PENDING', 409);
    expect(err.details).toEqual({ custom_tool_use_id: 'sevt_call_0', reason: 'answered' });
  });

  it('refuses a result for an unknown id, another turn\'s call, or with no turn (unknown)', () => {
    const unknown = spec.given(historyOf(...calling())).when(Cmd.customResult('sevt_nope_0')).thenThrows('CUSTOM_TOOL_USE_NOT_PENDING', 409);
    expect(unknown.details).toEqual({ custom_tool_use_id: 'sevt_nope_0', reason: 'unknown' });
    spec.given(historyOf(...readySession())).when(Cmd.customResult('sevt_call_0')).thenThrows('CUSTOM_TOOL_USE_NOT_PENDING', 409);
    const later = historyOf(...calling(), Cmd.interrupt(), Cmd.complete('turn_1', 1, true), Cmd.message('turn_2'));
    spec.given(later).when(Cmd.customResult('sevt_call_0')).thenThrows('CUSTOM_TOOL_USE_NOT_PENDING', 409);
  });

  it('an interrupt while waiting ends the wait: the turn stops, a late result is refused (interrupted)', () => {
    spec.given(historyOf(...calling())).when(Cmd.interrupt()).then([{ type: 'InterruptRequested', data: { turn_id: 'turn_1' } }]);
    const err = spec.given(historyOf(...calling(), Cmd.interrupt())).when(Cmd.customResult('sevt_call_0')).thenThrows('CUSTOM_TOOL_USE_NOT_PENDING', 409);
    expect(err.details).toEqual({ custom_tool_use_id: 'sevt_call_0', reason: 'interrupted' });
  });

  it('a pause while a custom tool call waits keeps its harness: it takes effect when the turn ends', () => {
    spec.given(historyOf(...calling())).when(Cmd.pause()).then([{ type: 'PauseRequested', data: { turn_id: 'turn_1' } }]);
    spec.given(historyOf(...calling(), Cmd.pause())).when(Cmd.customResult('sevt_call_0')).thenMatches(partial([{ type: 'CustomToolResultReceived' }]));
  });

  it('refuses TERMINATED (AGENT_RUNTIME_ERROR) and unknown sessions (NOT_FOUND)', () => {
    spec.given(historyOf(...calling(), Cmd.terminate())).when(Cmd.customResult('sevt_call_0')).thenThrows('AGENT_RUNTIME_ERROR', 409);
    spec.given([]).when(Cmd.customResult('sevt_call_0')).thenThrows('NOT_FOUND', 404);
  });
});
