import type { RecordedEvent, SessionEvent } from '@berth/contracts';
import { recoverResult } from './recover-result';

const recorded = (events: readonly SessionEvent[]): RecordedEvent[] =>
  events.map((e, i) => ({ ...e, id: `sevt_${i}`, session_id: 'sesn_1', seq: i + 1, schema_version: 1, command_id: 'cmd_1', occurred_at: '2026-01-01T00:00:00.000Z' }));

describe('what recover reports', () => {
  it('names the outcome and reason the kernel recorded', () => {
    const appended = recorded([
      { type: 'SandboxLost', data: { sandbox_id: 'sbx_1', generation: 1, cause: 'missing' } },
      { type: 'SessionRecovered', data: { outcome: 'manual-recovery-required', reason: 'sandbox_missing', policy: 'auto' } },
    ]);
    expect(recoverResult(appended, 'READY')).toEqual({ outcome: 'manual-recovery-required', reason: 'sandbox_missing', already_requested: false });
    expect(recoverResult(recorded([{ type: 'SessionRecovered', data: { outcome: 'reattached', reason: null, policy: null } }]), 'READY')).toEqual({
      outcome: 'reattached',
      reason: null,
      already_requested: false,
    });
  });

  it('says a start was already requested when the kernel appended nothing', () => {
    expect(recoverResult([], 'READY')).toEqual({ outcome: 'startup-requested', reason: null, already_requested: true });
    expect(recoverResult([], 'TERMINATED')).toEqual({ outcome: 'recreated', reason: null, already_requested: true });
  });
});
