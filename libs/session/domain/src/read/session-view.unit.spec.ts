import { Cmd, Out, readySession, runningTurn, stateOf } from '../testing/builders';
import { deriveSessionView } from './session-view';

const view = (...commands: Parameters<typeof stateOf>) => deriveSessionView(stateOf(...commands));

describe('deriveSessionView: public status and stop_reason', () => {
  it('is idle with no stop reason before the first turn', () => {
    expect(view(...readySession())).toMatchObject({ status: 'idle', stop_reason: null, lifecycle: 'READY' });
  });

  it('is running while a turn runs, also while its first sandbox starts', () => {
    expect(view(...runningTurn())).toMatchObject({ status: 'running', stop_reason: null, conversation: 'RUNNING', turn: { id: 'turn_1' } });
    expect(view(Cmd.create(), Cmd.message('turn_1'))).toMatchObject({ status: 'running', lifecycle: 'CREATING' });
  });

  it('is idle with end_turn after a completed turn, and after an interrupted one', () => {
    expect(view(...runningTurn(), Cmd.complete('turn_1'))).toMatchObject({ status: 'idle', stop_reason: { type: 'end_turn' } });
    expect(view(...runningTurn(), Cmd.interrupt(), Cmd.complete('turn_1', 1, true))).toMatchObject({ status: 'idle', stop_reason: { type: 'end_turn' } });
  });

  it('is idle with retries_exhausted after a failed turn', () => {
    expect(view(...runningTurn(), Cmd.fail('turn_1'))).toMatchObject({ status: 'idle', stop_reason: { type: 'retries_exhausted' } });
  });

  it('is idle with requires_action naming the tool uses that wait for confirmation', () => {
    const v = view(...runningTurn(), Cmd.output('turn_1', 0, [Out.toolUse('toolu_1', true)], 1, null, 'cmd_t'));
    expect(v).toMatchObject({ status: 'idle', stop_reason: { type: 'requires_action', event_ids: ['sevt_t_0'] }, conversation: 'WAITING_INPUT' });
  });

  it('is idle with requires_action naming a custom tool use until its result comes, then running again', () => {
    const calling = [...runningTurn(), Cmd.output('turn_1', 0, [Out.customToolUse('toolu_c')], 1, null, 'cmd_c')];
    expect(view(...calling)).toMatchObject({ status: 'idle', stop_reason: { type: 'requires_action', event_ids: ['sevt_c_0'] }, conversation: 'WAITING_INPUT' });
    expect(view(...calling, Cmd.customResult('sevt_c_0'))).toMatchObject({ status: 'running', stop_reason: null, conversation: 'RUNNING' });
  });

  it('is rescheduling while a turn whose sandbox died is being recovered', () => {
    expect(view(...runningTurn(), Cmd.died(1))).toMatchObject({
      status: 'rescheduling',
      runtime_unavailable: true,
      sandbox: null,
      turn: { recovery_phase: 'TRANSCRIPT_PENDING' },
    });
  });

  it('is terminated once TERMINATED or DELETED', () => {
    expect(view(...readySession(), Cmd.terminate()).status).toBe('terminated');
    expect(view(...readySession(), Cmd.delete()).status).toBe('terminated');
  });

  it('shows a session needing manual recovery as idle with retries_exhausted and the persisted reason', () => {
    expect(view(...runningTurn(), Cmd.recover({ exists: false, running: false }))).toMatchObject({
      status: 'idle',
      stop_reason: { type: 'retries_exhausted' },
      lifecycle: 'RECOVERY_REQUIRED',
      recovery: { policy: 'auto', reason: 'sandbox_missing' },
    });
  });

  it('carries usage, permission mode, harness and sandbox fields', () => {
    const v = view(...runningTurn(), Cmd.output('turn_1', 0, [Out.usage(3, 4)], 1, 'hs-9'), Cmd.complete('turn_1'), Cmd.permission('always_ask'));
    expect(v).toMatchObject({
      usage: { input_tokens: 3, output_tokens: 4 },
      permission_mode: 'always_ask',
      harness: { kind: 'claude-code', session_id: 'hs-9' },
      sandbox: { sandbox_id: 'sbx_1', generation: 1, expires_at: null },
      recovery: { policy: null, reason: null },
      queued_messages: 0,
    });
  });
});
