// Seed: DeriveRecoveryFieldsTests and the module-level projection-backed read test (see docs/seed-map.md).
import { deriveRecoveryFields } from '@berth/session-domain';
import { Probes, seedHarness } from '../testing/flow-harness';

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
    const h = seedHarness();
    // A turn with nothing to resume from whose sandbox's lease ran out: recovery needs a human.
    await h.given('session-1', (c) => [c.create(), c.bind(1), c.message('turn_1')]);
    h.prober.answer = Probes.expired;
    await h.flows.recoverSession('owner_1', 'session-1');

    const row = await h.sessions.get('owner_1', 'session-1');
    expect(row?.view).toMatchObject({ lifecycle: 'RECOVERY_REQUIRED', runtime_unavailable: true, recovery: { policy: 'auto', reason: 'sandbox_expired' } });
    expect((await h.flows.getSession('owner_1', 'session-1')).view.recovery).toEqual({ policy: 'auto', reason: 'sandbox_expired' });
  });
});
