import { deriveRecoveryFields } from './recovery-fields';

describe('deriveRecoveryFields', () => {
  it('reports nothing outside RECOVERY_REQUIRED, whatever is persisted', () => {
    expect(deriveRecoveryFields('READY', { recovery_reason: 'sandbox_expired' })).toEqual({ policy: null, reason: null });
  });

  it('lets a persisted reason and policy win', () => {
    expect(
      deriveRecoveryFields('RECOVERY_REQUIRED', { recovery_policy: 'manual', recovery_reason: 'sandbox_reattach_failed', runtime_unavailable: true }),
    ).toEqual({ policy: 'manual', reason: 'sandbox_reattach_failed' });
  });

  it('falls back to runtime_detached / session_recovery_required with the auto policy', () => {
    expect(deriveRecoveryFields('RECOVERY_REQUIRED', { runtime_unavailable: true })).toEqual({ policy: 'auto', reason: 'runtime_detached' });
    expect(deriveRecoveryFields('RECOVERY_REQUIRED', {})).toEqual({ policy: 'auto', reason: 'session_recovery_required' });
  });
});
