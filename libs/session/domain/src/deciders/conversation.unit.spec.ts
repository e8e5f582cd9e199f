import { DeciderSpec } from '@berth/core/testing';
import { sessionDecider } from '../decide';
import { Cmd, historyOf, Out, readySession, runningTurn } from '../testing/builders';

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
