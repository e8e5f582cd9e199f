import type { BerthError } from '@berth/core';
import { requireTurnEligible, type TurnEligibility } from './guards';
import type { Lifecycle } from './state';

const outcome = (lifecycle: Lifecycle, flags?: TurnEligibility): string => {
  try {
    requireTurnEligible({ lifecycle }, flags);
    return 'ok';
  } catch (e) {
    const err = e as BerthError;
    return `${err.status} ${err.code}`;
  }
};

describe('requireTurnEligible (the guard matrix)', () => {
  it.each<[Lifecycle, TurnEligibility | undefined, string]>([
    ['READY', undefined, 'ok'],
    ['RECOVERY_REQUIRED', undefined, 'ok'],
    ['CREATING', undefined, 'ok'],
    ['CREATING', { rejectCreating: true }, '409 SESSION_BUSY'],
    ['TERMINATED', undefined, '409 AGENT_RUNTIME_ERROR'],
    ['TERMINATED', { rejectTerminated: false }, 'ok'],
    ['DELETED', undefined, '409 AGENT_RUNTIME_ERROR'],
    ['DELETED', { rejectDeleted: true }, '409 AGENT_RUNTIME_ERROR'],
    ['DELETED', { rejectDeleted: false }, 'ok'],
  ])('%s with %j → %s', (lifecycle, flags, expected) => {
    expect(outcome(lifecycle, flags)).toBe(expected);
  });
});
