import { defaultRefreshPolicy, refreshAt, retryDelayMs, type RefreshPolicy } from './refresh-policy';

const policy: RefreshPolicy = { marginMs: 5 * 60_000, lifetimeShare: 0.2, retryDelaysMs: [10_000, 30_000, 60_000] };
const expires = '2026-05-01T13:00:00.000Z';
const before = (ms: number) => new Date(Date.parse(expires) - ms).toISOString();

describe('when a token is refreshed', () => {
  it('a token a user gave (lifetime unknown): once less than the margin remains', () => {
    expect(refreshAt(expires, null, policy)).toBe(before(5 * 60_000));
  });

  it('a token from the endpoint: at the margin or the share of its lifetime, whichever is earlier', () => {
    // One hour: 20 % is 12 minutes, more than the 5-minute margin.
    expect(refreshAt(expires, 3_600_000, policy)).toBe(before(12 * 60_000));
    // Ten minutes: 20 % is 2 minutes, the margin wins.
    expect(refreshAt(expires, 10 * 60_000, policy)).toBe(before(5 * 60_000));
  });

  it('never before half the lifetime of a short token has passed, so it is not refreshed the moment it arrives, forever', () => {
    expect(refreshAt(expires, 2 * 60_000, policy)).toBe(before(60_000));
    expect(refreshAt(expires, 60_000, policy)).toBe(before(30_000));
  });

  it('nothing is planned for a token without an expiry', () => {
    expect(refreshAt(null, null, policy)).toBeNull();
    expect(refreshAt(null, 60_000, policy)).toBeNull();
  });

  it('waits after failures in a row by the policy, the last wait repeating', () => {
    expect([1, 2, 3, 4, 9].map((n) => retryDelayMs(n, policy))).toEqual([10_000, 30_000, 60_000, 60_000, 60_000]);
    expect(defaultRefreshPolicy).toEqual({ marginMs: 300_000, lifetimeShare: 0.2, retryDelaysMs: [10_000, 30_000, 60_000, 120_000, 300_000] });
  });
});
