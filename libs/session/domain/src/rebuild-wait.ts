import type { SessionState } from './state';

/** How long a caller waits for a rebuilt sandbox before giving up, and how often it looks. */
export type RebuildWaitPolicy = Readonly<{ budgetMs: number; pollMs: number }>;

export const DEFAULT_REBUILD_WAIT: RebuildWaitPolicy = { budgetMs: 180_000, pollMs: 2_000 };

export type RebuildWaitStep =
  | Readonly<{ kind: 'stop'; because: 'ready' | 'terminal' | 'budget_exhausted' }>
  | Readonly<{ kind: 'wait'; delayMs: number }>;

/**
 * One step of the bounded wait for a dispatchable sandbox, over an injected clock. A terminal
 * session is not waited on (the turn guard reports it); a session still rebuilding
 * (CREATING, or READY with `runtime_unavailable`) is waited on until the budget runs out.
 */
export function nextRebuildWaitStep(
  state: Pick<SessionState, 'lifecycle' | 'runtime_unavailable'>,
  startedAt: Date,
  now: Date,
  policy: RebuildWaitPolicy = DEFAULT_REBUILD_WAIT,
): RebuildWaitStep {
  if (state.lifecycle === 'TERMINATED' || state.lifecycle === 'DELETED' || state.lifecycle === 'RECOVERY_REQUIRED') {
    return { kind: 'stop', because: 'terminal' };
  }
  if (state.lifecycle === 'READY' && !state.runtime_unavailable) return { kind: 'stop', because: 'ready' };
  const remaining = startedAt.getTime() + policy.budgetMs - now.getTime();
  if (remaining <= 0) return { kind: 'stop', because: 'budget_exhausted' };
  return { kind: 'wait', delayMs: Math.min(policy.pollMs, remaining) };
}
