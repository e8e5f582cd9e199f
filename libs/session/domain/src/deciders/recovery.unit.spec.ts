import { DeciderSpec } from '@berth/core/testing';
import { sessionDecider } from '../decide';
import { Cmd, historyOf, Out, partial, readySession, runningTurn, stateOf } from '../testing/builders';

const spec = DeciderSpec.for(sessionDecider);
const gone = { exists: false, running: false };

describe('RecoverSession', () => {
  it('reattaches a bound sandbox that still runs', () => {
    spec.given(historyOf(...readySession())).when(Cmd.recover()).then([
      { type: 'SessionRecovered', data: { outcome: 'reattached', reason: null, policy: null } },
    ]);
  });

  it('requests a new sandbox when the bound one is gone (startup-requested)', () => {
    spec.given(historyOf(...readySession())).when(Cmd.recover(gone)).then([
      { type: 'SandboxLost', data: { sandbox_id: 'sbx_1', generation: 1, cause: 'missing' } },
      { type: 'SessionRecovered', data: { outcome: 'startup-requested', reason: null, policy: null } },
      { type: 'SandboxRequested', data: { generation: 2, reason: 'recover' } },
    ]);
  });

  it('recreates a TERMINATED session, which comes back READY (resurrection)', () => {
    spec.given(historyOf(...readySession(), Cmd.terminate())).when(Cmd.recover(gone)).then([
      { type: 'SessionRecovered', data: { outcome: 'recreated', reason: null, policy: null } },
      { type: 'SandboxRequested', data: { generation: 2, reason: 'recover' } },
    ]);
    expect(stateOf(...readySession(), Cmd.terminate(), Cmd.recover(gone)).lifecycle).toBe('READY');
  });

  it('resumes a turn in a new sandbox when the harness session can be resumed', () => {
    const withHarnessSession = [...runningTurn(), Cmd.output('turn_1', 0, [Out.message('a')], 1, 'hs-1')];
    spec.given(historyOf(...withHarnessSession)).when(Cmd.recover({ exists: true, running: false })).thenMatches(partial([
      { type: 'SandboxLost', data: { cause: 'die' } },
      { type: 'TurnTranscriptPending' },
      { type: 'SessionRecovered', data: { outcome: 'startup-requested' } },
      { type: 'SandboxRequested', data: { generation: 2, reason: 'recover' } },
    ]));
  });

  it.each([
    ['missing', gone, 'sandbox_missing'],
    ['expired', { exists: true, running: true, expired: true }, 'sandbox_expired'],
  ])('needs a human when a turn lost its %s sandbox and there is nothing to resume from', (_name, probe, reason) => {
    spec.given(historyOf(...runningTurn())).when(Cmd.recover(probe)).thenMatches(partial([
      { type: 'SandboxLost' },
      { type: 'TurnTranscriptPending' },
      { type: 'SessionRecovered', data: { outcome: 'manual-recovery-required', reason, policy: 'auto' } },
    ]));
    expect(stateOf(...runningTurn(), Cmd.recover(probe)).lifecycle).toBe('RECOVERY_REQUIRED');
  });

  it('needs a human when the running sandbox expiry cannot be read, and keeps the binding', () => {
    spec.given(historyOf(...readySession())).when(Cmd.recover({ expiry_known: false })).then([
      { type: 'SessionRecovered', data: { outcome: 'manual-recovery-required', reason: 'sandbox_expiry_unavailable', policy: 'auto' } },
    ]);
  });

  it('leaves RECOVERY_REQUIRED once a later recover reattaches', () => {
    const state = stateOf(...readySession(), Cmd.recover({ expiry_known: false }), Cmd.recover());
    expect([state.lifecycle, state.recovery_reason]).toEqual(['READY', null]);
  });

  it('is a no-op while a sandbox start is already on its way', () => {
    spec.given(historyOf(Cmd.create())).when(Cmd.recover(gone)).thenNothingHappened();
    spec.given(historyOf(...readySession(), Cmd.recover(gone))).when(Cmd.recover(gone)).thenNothingHappened();
  });

  it('refuses a DELETED session with AGENT_RUNTIME_ERROR and an unknown one with NOT_FOUND', () => {
    spec.given(historyOf(Cmd.create(), Cmd.delete())).when(Cmd.recover()).thenThrows('AGENT_RUNTIME_ERROR', 409);
    spec.given([]).when(Cmd.recover()).thenThrows('NOT_FOUND', 404);
  });
});
