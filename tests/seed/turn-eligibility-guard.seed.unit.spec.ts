// Seed: TurnEligibilityGuardMatrixTests (see docs/seed-map.md).
import { requireTurnEligible } from '@berth/session-domain';

describe('TurnEligibilityGuardMatrixTests', () => {
  it('ready session passes', () => {
    expect(() => requireTurnEligible({ lifecycle: 'READY' })).not.toThrow();
  });

  it('terminated is allowed when rejectTerminated is false', () => {
    expect(() => requireTurnEligible({ lifecycle: 'TERMINATED' }, { rejectTerminated: false })).not.toThrow();
  });

  it('terminated is rejected by default', () => {
    expect(() => requireTurnEligible({ lifecycle: 'TERMINATED' })).toThrow(expect.objectContaining({ code: 'AGENT_RUNTIME_ERROR', status: 409 }));
  });

  it('creating is rejected when rejectCreating', () => {
    expect(() => requireTurnEligible({ lifecycle: 'CREATING' }, { rejectCreating: true })).toThrow(expect.objectContaining({ code: 'SESSION_BUSY', status: 409 }));
  });

  it('deleted is rejected when rejectDeleted', () => {
    expect(() => requireTurnEligible({ lifecycle: 'DELETED' }, { rejectDeleted: true })).toThrow(expect.objectContaining({ code: 'AGENT_RUNTIME_ERROR', status: 409 }));
  });
});
