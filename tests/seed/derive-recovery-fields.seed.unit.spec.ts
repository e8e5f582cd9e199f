// Seed: DeriveRecoveryFieldsTests and the module-level projection-backed read test (see docs/seed-map.md).
// Pins deriveRecoveryFields (part of deriveSessionView, which the kernel projects into the read model)
// and SessionUseCases.recover / .find.
import { deriveRecoveryFields } from '@berth/session-domain';
import { OWNER, Probes, seedPlatform } from './support/seed-platform';

describe('DeriveRecoveryFieldsTests', () => {
  it('outside RECOVERY_REQUIRED is (null, null)', () => {
    expect(deriveRecoveryFields('READY', { recovery_reason: 'sandbox_expired' })).toEqual({ policy: null, reason: null });
  });

  it('a persisted worker reason wins', () => {
    expect(
      deriveRecoveryFields('RECOVERY_REQUIRED', {
        recovery_policy: 'manual',
        recovery_reason: 'sandbox_reattach_failed',
        runtime_unavailable: true,
      }),
    ).toEqual({ policy: 'manual', reason: 'sandbox_reattach_failed' });
  });

  it('fallback vocabulary when no recovery pass classified', () => {
    expect(deriveRecoveryFields('RECOVERY_REQUIRED', { runtime_unavailable: true })).toEqual({ policy: 'auto', reason: 'runtime_detached' });
    expect(deriveRecoveryFields('RECOVERY_REQUIRED', {})).toEqual({ policy: 'auto', reason: 'session_recovery_required' });
  });
});

describe('projection-backed read', () => {
  it('surfaces the persisted recovery reason', async () => {
    const p = seedPlatform();
    // A turn with nothing to resume from whose sandbox's lease ran out: recovery needs a human.
    await p.given('session-1', (c) => [c.create(), c.bind(1), c.message('turn_1')]);
    p.probe.answer = Probes.expired;
    await p.useCases.recover(OWNER, 'session-1');

    const row = await p.sessions.get(OWNER, 'session-1');
    expect(row?.view).toMatchObject({ lifecycle: 'RECOVERY_REQUIRED', runtime_unavailable: true, recovery: { policy: 'auto', reason: 'sandbox_expired' } });
    expect((await p.useCases.find(OWNER, 'session-1')).view).toMatchObject({ recovery: { policy: 'auto', reason: 'sandbox_expired' } });
  });
});
