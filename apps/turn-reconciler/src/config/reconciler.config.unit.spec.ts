import { loadConfig } from '@berth/nest';
import { defaultReconcilePolicy } from '@berth/turns-domain';
import { ReconcilerConfigSchema } from './reconciler.config';

describe('turn-reconciler configuration', () => {
  it('defaults to the documented timers', () => {
    const config = loadConfig(ReconcilerConfigSchema, {});
    expect(config.policy).toEqual(defaultReconcilePolicy);
    expect(config.sweepIntervalMs).toBe(1_000);
    expect(config.crashPoint).toBeNull();
  });

  it('refuses a pending timeout shorter than the effect timeout, naming the variable', () => {
    expect(() => loadConfig(ReconcilerConfigSchema, { BERTH_RECONCILE_PENDING_TIMEOUT_MS: '3000' })).toThrow(
      /BERTH_RECONCILE_PENDING_TIMEOUT_MS: must exceed BERTH_PROBE_TIMEOUT_MS/,
    );
  });

  it('refuses an unknown crash point', () => {
    expect(() => loadConfig(ReconcilerConfigSchema, { BERTH_CRASH_POINT: 'nowhere' })).toThrow(/BERTH_CRASH_POINT/);
  });
});
