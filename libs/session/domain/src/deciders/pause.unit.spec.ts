import { DeciderSpec } from '@berth/core/testing';
import { sessionDecider } from '../decide';
import { deriveSessionView } from '../read/session-view';
import { Cmd, historyOf, Out, readySession, runningTurn, stateOf } from '../testing/builders';

const spec = DeciderSpec.for(sessionDecider);
/** A READY session on generation 1 whose first turn completed with a harness session to resume. */
const idleAfterTurn = () => [...runningTurn(), Cmd.output('turn_1', 0, [Out.message('done')], 1, 'hs_1'), Cmd.complete('turn_1', 1)];

describe('PauseSession', () => {
  it('releases the bound sandbox and keeps the conversation', () => {
    spec.given(historyOf(...idleAfterTurn())).when(Cmd.pause()).then([{ type: 'SessionPaused', data: { sandbox_id: 'sbx_1', turn_id: null } }]);
    const state = stateOf(...idleAfterTurn(), Cmd.pause());
    expect(state).toMatchObject({ paused: true, sandbox: null, sandbox_request: null, runtime_unavailable: true, harness_session_id: 'hs_1', lifecycle: 'READY' });
    expect(deriveSessionView(state)).toMatchObject({ status: 'idle', paused: true, stop_reason: { type: 'end_turn' }, sandbox: null });
  });

  it('gives up a sandbox still starting: its late bind is fenced off', () => {
    spec.given(historyOf(Cmd.create())).when(Cmd.pause()).then([{ type: 'SessionPaused', data: { sandbox_id: null, turn_id: null } }]);
    spec.given(historyOf(Cmd.create(), Cmd.pause())).when(Cmd.bind(1)).thenNothingHappened();
  });

  it('is a no-op on a paused session', () => {
    spec.given(historyOf(...readySession(), Cmd.pause())).when(Cmd.pause()).thenNothingHappened();
  });

  const awaiting = () => [...runningTurn(), Cmd.output('turn_1', 0, [Out.message('asking'), Out.toolUse('toolu_1', true)], 1, 'hs_1')];
  /** The waiting turn's history and the event id of its pending tool use (ids come from the commands' own ids). */
  const waiting = () => {
    const history = awaiting();
    return { history, pending: stateOf(...history).current_turn?.pending_confirmations[0] ?? '' };
  };

  it('pauses a turn waiting for a confirmation at once: the sandbox goes, the turn stays open with its pending confirmation', () => {
    const { history, pending } = waiting();
    spec.given(historyOf(...history)).when(Cmd.pause()).then([{ type: 'SessionPaused', data: { sandbox_id: 'sbx_1', turn_id: 'turn_1' } }]);
    const state = stateOf(...history, Cmd.pause());
    expect(state.current_turn).toMatchObject({ id: 'turn_1', status: 'AWAITING_CONFIRMATION', pending_confirmations: [pending], harness_released: true });
    expect(state).toMatchObject({ paused: true, sandbox: null });
    expect(deriveSessionView(state)).toMatchObject({ status: 'idle', paused: true, stop_reason: { type: 'requires_action', event_ids: [pending] } });
  });

  it('the answer to a paused session resumes it (new sandbox) and resumes the turn; queued messages run after it, in order', () => {
    const { history, pending } = waiting();
    const paused = [...history, Cmd.message('turn_2'), Cmd.message('turn_3'), Cmd.pause()];
    expect(stateOf(...paused).queued.map((q) => q.turn_id)).toEqual(['turn_2', 'turn_3']);
    spec
      .given(historyOf(...paused))
      .when(Cmd.confirm(pending))
      .then([
        { type: 'SessionResumed', data: {} },
        { type: 'SandboxRequested', data: { generation: 2, reason: 'rebuild' } },
        { type: 'ToolUseConfirmed', data: { turn_id: 'turn_1', tool_use_event_id: pending, result: 'allow', deny_message: null } },
        { type: 'TurnResumed', data: { turn_id: 'turn_1' } },
      ]);
    const continued = [...paused, Cmd.confirm(pending), Cmd.bind(2), Cmd.output('turn_1', 2, [Out.message('done')], 2)];
    expect(stateOf(...continued).current_turn?.last_offset).toBe(2);
    spec.given(historyOf(...continued)).when(Cmd.complete('turn_1', 2)).then([
      { type: 'TurnCompleted', data: { turn_id: 'turn_1', interrupted: false } },
      { type: 'TurnStarted', data: { turn_id: 'turn_2' } },
    ]);
  });

  it('resume of a session paused with a waiting turn brings the sandbox back and leaves the turn waiting for its answer', () => {
    spec
      .given(historyOf(...waiting().history, Cmd.message('turn_2'), Cmd.pause()))
      .when(Cmd.resume())
      .then([
        { type: 'SessionResumed', data: {} },
        { type: 'SandboxRequested', data: { generation: 2, reason: 'rebuild' } },
      ]);
    expect(stateOf(...awaiting(), Cmd.pause(), Cmd.resume(), Cmd.bind(2)).current_turn).toMatchObject({ status: 'AWAITING_CONFIRMATION', harness_released: true });
  });

  it('an interrupt of the waiting turn while paused settles it; the queue waits for the resume, which starts it', () => {
    const paused = [...awaiting(), Cmd.message('turn_2'), Cmd.pause()];
    spec.given(historyOf(...paused)).when(Cmd.interrupt()).then([
      { type: 'InterruptRequested', data: { turn_id: 'turn_1' } },
      { type: 'TurnCompleted', data: { turn_id: 'turn_1', interrupted: true } },
    ]);
    spec
      .given(historyOf(...paused, Cmd.interrupt()))
      .when(Cmd.resume())
      .then([
        { type: 'SessionResumed', data: {} },
        { type: 'SandboxRequested', data: { generation: 2, reason: 'rebuild' } },
        { type: 'TurnStarted', data: { turn_id: 'turn_2' } },
      ]);
    spec
      .given(historyOf(...paused, Cmd.interrupt()))
      .when(Cmd.message('turn_3'))
      .then([
        { type: 'SessionResumed', data: {} },
        { type: 'SandboxRequested', data: { generation: 2, reason: 'rebuild' } },
        { type: 'UserMessageReceived', data: { turn_id: 'turn_3', content: [{ type: 'text', text: 'hello' }], queued: true } },
        { type: 'TurnStarted', data: { turn_id: 'turn_2' } },
      ]);
  });

  it('a running turn is never cut: the pause is requested and happens when the turn ends, before the next queued message', () => {
    spec.given(historyOf(...runningTurn())).when(Cmd.pause()).then([{ type: 'PauseRequested', data: { turn_id: 'turn_1' } }]);
    const requested = [...runningTurn(), Cmd.message('turn_2'), Cmd.pause()];
    spec.given(historyOf(...requested)).when(Cmd.pause()).thenNothingHappened();
    spec.given(historyOf(...requested)).when(Cmd.complete('turn_1')).then([
      { type: 'TurnCompleted', data: { turn_id: 'turn_1', interrupted: false } },
      { type: 'SessionPaused', data: { sandbox_id: 'sbx_1', turn_id: null } },
    ]);
    expect(stateOf(...requested, Cmd.complete('turn_1'))).toMatchObject({ paused: true, pause_requested: false, queued: [{ turn_id: 'turn_2' }] });
    spec.given(historyOf(...requested, Cmd.complete('turn_1'))).when(Cmd.resume()).then([
      { type: 'SessionResumed', data: {} },
      { type: 'SandboxRequested', data: { generation: 2, reason: 'rebuild' } },
      { type: 'TurnStarted', data: { turn_id: 'turn_2' } },
    ]);
  });

  it('a requested pause happens when the running turn starts waiting for a confirmation, or when it fails', () => {
    const requested = [...runningTurn(), Cmd.pause()];
    const events = sessionDecider.decide(Cmd.output('turn_1', 0, [Out.toolUse('toolu_1', true)]), stateOf(...requested));
    expect(events.map((e) => e.type)).toEqual(['AgentToolUseRecorded', 'TurnAwaitingConfirmation', 'SessionPaused']);
    expect(events.at(-1)).toEqual({ type: 'SessionPaused', data: { sandbox_id: 'sbx_1', turn_id: 'turn_1' } });
    const failed = sessionDecider.decide(Cmd.fail('turn_1'), stateOf(...requested));
    expect(failed.at(-1)).toEqual({ type: 'SessionPaused', data: { sandbox_id: 'sbx_1', turn_id: null } });
  });

  it('a resume before the turn ended calls the requested pause off', () => {
    const requested = [...runningTurn(), Cmd.pause()];
    spec.given(historyOf(...requested)).when(Cmd.resume()).then([{ type: 'SessionResumed', data: {} }]);
    spec.given(historyOf(...requested, Cmd.resume())).when(Cmd.complete('turn_1')).then([{ type: 'TurnCompleted', data: { turn_id: 'turn_1', interrupted: false } }]);
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
