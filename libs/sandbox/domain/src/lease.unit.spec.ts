import { isLeaseExpired, leaseExpiresAt } from './lease';

const at = (iso: string) => new Date(iso);

describe('lease expiry', () => {
  it('runs out idle-timeout after the last activity', () => {
    const expires = leaseExpiresAt({
      lastActivityAt: at('2026-01-01T10:00:00Z'),
      startedAt: at('2026-01-01T09:00:00Z'),
      idle: { idleTimeoutSeconds: 600, maxLifetimeSeconds: null },
    });
    expect(expires.toISOString()).toBe('2026-01-01T10:10:00.000Z');
  });

  it('never outlives the maximum lifetime, however active', () => {
    const expires = leaseExpiresAt({
      lastActivityAt: at('2026-01-01T10:55:00Z'),
      startedAt: at('2026-01-01T10:00:00Z'),
      idle: { idleTimeoutSeconds: 600, maxLifetimeSeconds: 3600 },
    });
    expect(expires.toISOString()).toBe('2026-01-01T11:00:00.000Z');
  });

  describe('predicate (as the seed pins it)', () => {
    const now = at('2026-06-01T00:00:00Z');
    it.each([
      [{ sandboxId: null, expiresAt: '2000-01-01T00:00:00+00:00' }, false],
      [{ sandboxId: 'sbx-1', expiresAt: null }, false],
      [{ sandboxId: 'sbx-1', expiresAt: '' }, false],
      [{ sandboxId: 'sbx-1', expiresAt: 'not-a-date' }, false],
      [{ sandboxId: 'sbx-1', expiresAt: '2000-01-01T00:00:00+00:00' }, true],
      [{ sandboxId: 'sbx-1', expiresAt: '2099-01-01T00:00:00+00:00' }, false],
      [{ sandboxId: 'sbx-1', expiresAt: '2000-01-01T00:00:00' }, true],
    ])('%j → %s', (binding, expired) => {
      expect(isLeaseExpired(binding, now)).toBe(expired);
    });
  });
});
