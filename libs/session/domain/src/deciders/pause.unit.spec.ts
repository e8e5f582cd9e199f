import { DeciderSpec } from '@berth/core/testing';
import { sessionDecider } from '../decide';
import { deriveSessionView } from '../read/session-view';
import { Cmd, historyOf, Out, readySession, runningTurn, stateOf } from '../testing/builders';

const spec = DeciderSpec.for(sessionDecider);
/** A READY session on generation 1 whose first turn completed with a harness session to resume. */
const idleAfterTurn = () => [...runningTurn(), Cmd.output('turn_1', 0, [Out.message('done')], 1, 'hs_1'), Cmd.complete('turn_1', 1)];

describe('PauseSession', () => {
  it('releases the bound sandbox and keeps the conversation', () => {
    spec.given(historyOf(...idleAfterTurn())).when(Cmd.pause()).then([{ type: 'SessionPaused', data: { sandbox_id: 'sbx_1' } }]);
    const state = stateOf(...idleAfterTurn(), Cmd.pause());
    expect(state).toMatchObject({ paused: true, sandbox: null, sandbox_request: null, runtime_unavailable: true, harness_session_id: 'hs_1', lifecycle: 'READY' });
    expect(deriveSessionView(state)).toMatchObject({ status: 'idle', paused: true, stop_reason: { type: 'end_turn' }, sandbox: null });
  });

  it('gives up a sandbox still starting: its late bind is fenced off', () => {
    spec.given(historyOf(Cmd.create())).when(Cmd.pause()).then([{ type: 'SessionPaused', data: { sandbox_id: null } }]);
    spec.given(historyOf(Cmd.create(), Cmd.pause())).when(Cmd.bind(1)).thenNothingHappened();
  });

  it('is a no-op on a paused session', () => {
    spec.given(historyOf(...readySession(), Cmd.pause())).when(Cmd.pause()).thenNothingHappened();
  });

  it('refuses while a turn is active (running or waiting for a confirmation) with SESSION_BUSY', () => {
    spec.given(historyOf(...runningTurn())).when(Cmd.pause()).thenThrows('SESSION_BUSY', 409);
    const awaiting = [...runningTurn(), Cmd.output('turn_1', 0, [Out.toolUse('toolu_1', true)])];
    expect(stateOf(...awaiting).current_turn?.status).toBe('AWAITING_CONFIRMATION');
    spec.given(historyOf(...awaiting)).when(Cmd.pause()).thenThrows('SESSION_BUSY', 409);
  });

  it('refuses an unknown, terminated, deleted session, and one that needs recovery', () => {
    spec.given([]).when(Cmd.pause()).thenThrows('NOT_FOUND', 404);
    spec.given(historyOf(...readySession(), Cmd.terminate())).when(Cmd.pause()).thenThrows('AGENT_RUNTIME_ERROR', 409);
    spec.given(historyOf(...readySession(), Cmd.delete())).when(Cmd.pause()).thenThrows('AGENT_RUNTIME_ERROR', 409);
    const manual = [...runningTurn(), Cmd.recover({ exists: false, running: false })];
    expect(stateOf(...manual).lifecycle).toBe('RECOVERY_REQUIRED');
    spec.given(historyOf(...manual)).when(Cmd.pause()).thenThrows('SESSION_BUSY', 409);
  });

  it('ignores facts about the released sandbox', () => {
    spec.given(historyOf(...readySession(), Cmd.pause())).when(Cmd.died(1)).thenNothingHappened();
    spec.given(historyOf(...readySession(), Cmd.pause())).when(Cmd.expired(1)).thenNothingHappened();
  });
});

describe('ResumeSession', () => {
  it('requests a sandbox at the next generation; binding it makes the session live again, the harness session kept', () => {
    spec
      .given(historyOf(...idleAfterTurn(), Cmd.pause()))
      .when(Cmd.resume())
      .then([
        { type: 'SessionResumed', data: {} },
        { type: 'SandboxRequested', data: { generation: 2, reason: 'rebuild' } },
      ]);
    const state = stateOf(...idleAfterTurn(), Cmd.pause(), Cmd.resume(), Cmd.bind(2));
    expect(state).toMatchObject({ paused: false, sandbox: { sandbox_id: 'sbx_2', generation: 2 }, runtime_unavailable: false, harness_session_id: 'hs_1' });
  });

  it('is a no-op when not paused, and refuses a terminated session', () => {
    spec.given(historyOf(...readySession())).when(Cmd.resume()).thenNothingHappened();
    spec.given(historyOf(...readySession(), Cmd.pause(), Cmd.terminate())).when(Cmd.resume()).thenThrows('AGENT_RUNTIME_ERROR', 409);
  });

  it('is what a message to a paused session starts with, before its turn', () => {
    spec
      .given(historyOf(...idleAfterTurn(), Cmd.pause()))
      .when(Cmd.message('turn_2'))
      .then([
        { type: 'SessionResumed', data: {} },
        { type: 'SandboxRequested', data: { generation: 2, reason: 'rebuild' } },
        { type: 'UserMessageReceived', data: { turn_id: 'turn_2', content: [{ type: 'text', text: 'hello' }], queued: false } },
        { type: 'TurnStarted', data: { turn_id: 'turn_2' } },
      ]);
  });

  it('a session paused while its first sandbox started comes back through a new one', () => {
    spec
      .given(historyOf(Cmd.create(), Cmd.pause()))
      .when(Cmd.message('turn_1'))
      .then([
        { type: 'SessionResumed', data: {} },
        { type: 'SandboxRequested', data: { generation: 2, reason: 'rebuild' } },
        { type: 'UserMessageReceived', data: { turn_id: 'turn_1', content: [{ type: 'text', text: 'hello' }], queued: false } },
        { type: 'TurnStarted', data: { turn_id: 'turn_1' } },
      ]);
    expect(stateOf(Cmd.create(), Cmd.pause(), Cmd.message('turn_1'), Cmd.bind(2)).lifecycle).toBe('READY');
  });

  it('a recover leaves a paused session paused (nothing is broken); terminate ends the pause', () => {
    spec.given(historyOf(...readySession(), Cmd.pause())).when(Cmd.recover({ exists: false, running: false })).thenNothingHappened();
    expect(stateOf(...readySession(), Cmd.pause(), Cmd.terminate())).toMatchObject({ paused: false, lifecycle: 'TERMINATED' });
  });
});
