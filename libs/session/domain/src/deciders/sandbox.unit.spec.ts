import { DeciderSpec } from '@berth/core/testing';
import { sessionDecider } from '../decide';
import { evolve } from '../evolve';
import { initialState } from '../state';
import { Cmd, historyOf, readySession, runningTurn, stateOf } from '../testing/builders';

const spec = DeciderSpec.for(sessionDecider);

describe('BindSandbox', () => {
  it('binds the requested generation; the session becomes READY', () => {
    spec.given(historyOf(Cmd.create())).when(Cmd.bind(1, 'sbx_1', '2026-01-01T01:00:00.000Z')).then([
      { type: 'SandboxBound', data: { sandbox_id: 'sbx_1', generation: 1, expires_at: '2026-01-01T01:00:00.000Z', warm: false } },
    ]);
    expect(stateOf(Cmd.create(), Cmd.bind(1)).lifecycle).toBe('READY');
  });

  it('is a no-op for a redelivered bind, a stale generation, or a session that no longer wants a sandbox', () => {
    spec.given(historyOf(...readySession())).when(Cmd.bind(1)).thenNothingHappened();
    spec.given(historyOf(Cmd.create())).when(Cmd.bind(2)).thenNothingHappened();
    spec.given(historyOf(Cmd.create(), Cmd.terminate())).when(Cmd.bind(1)).thenNothingHappened();
    spec.given(historyOf(Cmd.create(), Cmd.delete())).when(Cmd.bind(1)).thenNothingHappened();
  });

  it('refuses an unknown session with NOT_FOUND', () => {
    spec.given([]).when(Cmd.bind(1)).thenThrows('NOT_FOUND', 404);
  });
});

describe('the lease of a binding with terms', () => {
  const boundAt = '2026-01-01T00:00:01.000Z';
  const plus = (at: string, seconds: number) => new Date(Date.parse(at) + seconds * 1000).toISOString();
  const leased = (max_expires_at: string | null = null) => Cmd.bind(1, 'sbx_1', plus(boundAt, 60), { idle_timeout_seconds: 60, max_expires_at });
  const occurredAt = (history: ReturnType<typeof historyOf>, type: string) => history.find((e) => e.type === type)?.occurred_at ?? '';

  it('records the terms; each turn start, completion and failure moves expires_at to that moment plus the idle timeout', () => {
    spec.given(historyOf(Cmd.create())).when(leased()).then([
      { type: 'SandboxBound', data: { sandbox_id: 'sbx_1', generation: 1, expires_at: plus(boundAt, 60), warm: false, lease: { idle_timeout_seconds: 60, max_expires_at: null } } },
    ]);
    const started = [Cmd.create(), leased(), Cmd.message('turn_1')];
    expect(stateOf(...started).sandbox?.expires_at).toBe(plus(occurredAt(historyOf(...started), 'TurnStarted'), 60));
    for (const [end, type] of [[Cmd.complete('turn_1'), 'TurnCompleted'], [Cmd.fail('turn_1'), 'TurnFailed']] as const) {
      const history = historyOf(...started, end);
      expect(occurredAt(history, type) > occurredAt(history, 'TurnStarted')).toBe(true);
      expect(stateOf(...started, end).sandbox?.expires_at).toBe(plus(occurredAt(history, type), 60));
    }
  });

  it('never moves expires_at past the lifetime end', () => {
    const lifetimeEnd = plus(boundAt, 61);
    expect(stateOf(Cmd.create(), leased(lifetimeEnd), Cmd.message('turn_1'), Cmd.complete('turn_1')).sandbox?.expires_at).toBe(lifetimeEnd);
  });

  it('keeps the bound expiry of a binding without terms (recorded before leases moved)', () => {
    expect(stateOf(Cmd.create(), Cmd.bind(1, 'sbx_1', plus(boundAt, 60)), Cmd.message('turn_1'), Cmd.complete('turn_1')).sandbox?.expires_at).toBe(plus(boundAt, 60));
  });
});

describe('ReportEgressDenied', () => {
  const denial = { host: 'example.com', port: 443, reason: 'host_not_allowed', setting: 'config.networking.allowed_hosts', message: 'Berth egress refused example.com:443', generation: 1 } as const;

  it('records the refusal for the bound sandbox, with the turn running then', () => {
    spec.given(historyOf(...readySession())).when(Cmd.egressDenied(1)).then([{ type: 'EgressDenied', data: { ...denial, turn_id: null } }]);
    spec.given(historyOf(...readySession(), Cmd.message('turn_1'))).when(Cmd.egressDenied(1)).then([{ type: 'EgressDenied', data: { ...denial, turn_id: 'turn_1' } }]);
  });

  it('leaves the session as it was (but for its last-updated stamp)', () => {
    const history = historyOf(...readySession(), Cmd.message('turn_1'), Cmd.egressDenied(1));
    const before = history.slice(0, -1).reduce(evolve, initialState());
    expect({ ...history.reduce(evolve, initialState()), updated_at: before.updated_at }).toEqual(before);
  });

  it('drops a refusal about another generation or a deleted session', () => {
    spec.given(historyOf(...readySession())).when(Cmd.egressDenied(2)).thenNothingHappened();
    spec.given(historyOf(Cmd.create())).when(Cmd.egressDenied(1)).thenNothingHappened();
    spec.given(historyOf(...readySession(), Cmd.delete())).when(Cmd.egressDenied(1)).thenNothingHappened();
  });

  it('refuses an unknown session with NOT_FOUND', () => {
    spec.given([]).when(Cmd.egressDenied(1)).thenThrows('NOT_FOUND', 404);
  });
});

describe('ReportSandboxStartFailed', () => {
  it('leaves the session READY without a runtime', () => {
    spec.given(historyOf(Cmd.create())).when(Cmd.startFailed(1)).then([{ type: 'SandboxStartFailed', data: { generation: 1, message: 'image missing' } }]);
    const state = stateOf(Cmd.create(), Cmd.startFailed(1));
    expect([state.lifecycle, state.runtime_unavailable, state.sandbox_request]).toEqual(['READY', true, null]);
  });

  it('fails the turn that waited for it; the next queued message gets its own attempt', () => {
    spec.given(historyOf(Cmd.create(), Cmd.message('turn_1'), Cmd.message('turn_2'))).when(Cmd.startFailed(1, 'no image')).then([
      { type: 'SandboxStartFailed', data: { generation: 1, message: 'no image' } },
      { type: 'SessionErrorRaised', data: { turn_id: 'turn_1', error_type: 'berth.sandbox_start_failed_error', message: 'no image', retry_status: 'terminal' } },
      { type: 'TurnFailed', data: { turn_id: 'turn_1', reason: 'sandbox_start_failed', message: 'no image' } },
      { type: 'SandboxRequested', data: { generation: 2, reason: 'rebuild' } },
      { type: 'TurnStarted', data: { turn_id: 'turn_2' } },
    ]);
  });

  it('is a no-op for a generation nobody is waiting for', () => {
    spec.given(historyOf(...readySession())).when(Cmd.startFailed(1)).thenNothingHappened();
  });

  it('refuses an unknown session with NOT_FOUND', () => {
    spec.given([]).when(Cmd.startFailed(1)).thenThrows('NOT_FOUND', 404);
  });
});

describe.each([
  ['ReportSandboxDied', (g: number, id?: string) => Cmd.died(g, id), 'die'],
  ['ReportSandboxExpired', (g: number, id?: string) => Cmd.expired(g, id), 'expired'],
] as const)('%s', (_name, report, cause) => {
  it('marks the runtime unavailable; the session stays READY', () => {
    spec.given(historyOf(...readySession())).when(report(1)).then([{ type: 'SandboxLost', data: { sandbox_id: 'sbx_1', generation: 1, cause } }]);
    const state = stateOf(...readySession(), report(1));
    expect([state.lifecycle, state.runtime_unavailable, state.sandbox]).toEqual(['READY', true, null]);
  });

  it('hands a running turn to transcript recovery', () => {
    spec.given(historyOf(...runningTurn())).when(report(1)).then([
      { type: 'SandboxLost', data: { sandbox_id: 'sbx_1', generation: 1, cause } },
      { type: 'TurnTranscriptPending', data: { turn_id: 'turn_1' } },
    ]);
  });

  it('is a no-op for a stale generation, another sandbox, or a sandbox already lost', () => {
    spec.given(historyOf(...readySession())).when(report(2)).thenNothingHappened();
    spec.given(historyOf(...readySession())).when(report(1, 'sbx_other')).thenNothingHappened();
    spec.given(historyOf(...readySession(), report(1))).when(report(1)).thenNothingHappened();
  });

  it('refuses an unknown session with NOT_FOUND', () => {
    spec.given([]).when(report(1)).thenThrows('NOT_FOUND', 404);
  });
});
