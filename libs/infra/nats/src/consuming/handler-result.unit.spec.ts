import { BerthError, ConcurrencyError, NotFoundError, ValidationError } from '@berth/core';
import { classifyError, retryDelayMs } from './handler-result';

describe('classifyError', () => {
  it('treats bad input and refusals as permanent, so they are dead-lettered instead of retried', () => {
    expect(classifyError(new ValidationError('data.turn_id: Required')).kind).toBe('permanent');
    expect(classifyError(new NotFoundError('no such session')).kind).toBe('permanent');
  });

  it('retries lost races, server-side failures and anything unclassified', () => {
    expect(classifyError(new ConcurrencyError('seq 4 taken')).kind).toBe('transient');
    expect(classifyError(new BerthError('VERSION_CONFLICT', 409, 'snapshot moved')).kind).toBe('transient');
    expect(classifyError(new BerthError('UNAVAILABLE', 503, 'store down')).kind).toBe('transient');
    expect(classifyError(new Error('socket hang up'))).toEqual({ kind: 'transient', reason: 'Error: socket hang up' });
    expect(classifyError('a string').kind).toBe('transient');
  });
});

describe('retryDelayMs', () => {
  it('doubles per attempt and stops at the cap', () => {
    const policy = { baseDelayMs: 100, maxDelayMs: 1_000 };
    expect([1, 2, 3, 4, 5, 50].map((n) => retryDelayMs(n, policy))).toEqual([100, 200, 400, 800, 1_000, 1_000]);
  });
});
