// Seed: BoundRuntimeLeaseExpiredTests (see docs/seed-map.md).
import { boundLeaseExpired } from '@berth/session-domain';

const now = new Date('2026-01-01T00:00:00.000Z');
const expired = (binding: { sandbox_id?: string | null; expires_at?: string | null }) => boundLeaseExpired(binding, now);

describe('BoundRuntimeLeaseExpiredTests', () => {
  it('missing sandbox id is never expired', () => {
    expect(expired({ expires_at: '2000-01-01T00:00:00+00:00' })).toBe(false);
  });

  it('bound sandbox with missing expiry is never expired', () => {
    expect(expired({ sandbox_id: 'sbx-1', expires_at: null })).toBe(false);
  });

  it('bound sandbox with empty expiry is never expired', () => {
    expect(expired({ sandbox_id: 'sbx-1', expires_at: '' })).toBe(false);
  });

  it('unparseable expiry is never expired', () => {
    expect(expired({ sandbox_id: 'sbx-1', expires_at: 'not-a-date' })).toBe(false);
  });

  it('past expiry is expired', () => {
    expect(expired({ sandbox_id: 'sbx-1', expires_at: '2000-01-01T00:00:00+00:00' })).toBe(true);
  });

  it('future expiry is not expired', () => {
    expect(expired({ sandbox_id: 'sbx-1', expires_at: '2099-01-01T00:00:00+00:00' })).toBe(false);
  });

  it('naive past expiry is expired (read as UTC)', () => {
    expect(expired({ sandbox_id: 'sbx-1', expires_at: '2000-01-01T00:00:00' })).toBe(true);
  });
});
