import { nextRebuildWaitStep } from './rebuild-wait';

const start = new Date('2026-01-01T00:00:00.000Z');
const at = (ms: number) => new Date(start.getTime() + ms);
const policy = { budgetMs: 10_000, pollMs: 2_000 };

describe('nextRebuildWaitStep', () => {
  it('stops at once for a terminal session (no hang on a dead rebuild)', () => {
    for (const lifecycle of ['TERMINATED', 'DELETED', 'RECOVERY_REQUIRED'] as const) {
      expect(nextRebuildWaitStep({ lifecycle, runtime_unavailable: true }, start, start, policy)).toEqual({ kind: 'stop', because: 'terminal' });
    }
  });

  it('stops at once when the runtime is available', () => {
    expect(nextRebuildWaitStep({ lifecycle: 'READY', runtime_unavailable: false }, start, start, policy)).toEqual({ kind: 'stop', because: 'ready' });
  });

  it('waits one poll while rebuilding, never past the budget', () => {
    const rebuilding = { lifecycle: 'READY' as const, runtime_unavailable: true };
    expect(nextRebuildWaitStep(rebuilding, start, at(0), policy)).toEqual({ kind: 'wait', delayMs: 2_000 });
    expect(nextRebuildWaitStep({ lifecycle: 'CREATING', runtime_unavailable: false }, start, at(9_000), policy)).toEqual({ kind: 'wait', delayMs: 1_000 });
    expect(nextRebuildWaitStep(rebuilding, start, at(10_000), policy)).toEqual({ kind: 'stop', because: 'budget_exhausted' });
  });
});
