import { boundLeaseExpired } from './lease';

const now = new Date('2026-06-01T12:00:00.000Z');

describe('boundLeaseExpired', () => {
  it.each([
    ['no sandbox bound', { sandbox_id: null, expires_at: '2000-01-01T00:00:00+00:00' }, false],
    ['no expiry', { sandbox_id: 'sbx_1', expires_at: null }, false],
    ['empty expiry', { sandbox_id: 'sbx_1', expires_at: '' }, false],
    ['unparseable expiry', { sandbox_id: 'sbx_1', expires_at: 'not-a-date' }, false],
    ['future expiry', { sandbox_id: 'sbx_1', expires_at: '2099-01-01T00:00:00+00:00' }, false],
    ['past expiry', { sandbox_id: 'sbx_1', expires_at: '2000-01-01T00:00:00+00:00' }, true],
    ['naive past expiry (read as UTC)', { sandbox_id: 'sbx_1', expires_at: '2026-06-01T11:59:59' }, true],
    ['naive future expiry (read as UTC)', { sandbox_id: 'sbx_1', expires_at: '2026-06-01T12:00:01' }, false],
  ])('%s → %s', (_name, binding, expected) => {
    expect(boundLeaseExpired(binding, now)).toBe(expected);
  });

  it('is false without a binding at all', () => {
    expect(boundLeaseExpired(null, now)).toBe(false);
  });
});
