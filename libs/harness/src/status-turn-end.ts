import type { Usage } from '@berth/contracts';
import type { ParseStep } from './harness-adapter.port';
import type { ParseState } from './parse-state';

/**
 * The last line of a turn for harnesses that end it with a `status` (`completed`, `interrupted` or
 * `failed`, missing meaning completed) and the whole turn's usage: one usage output, then the
 * terminal. A failure without its own message falls back to the last error the harness reported.
 */
export function statusTurnEnd(state: ParseState, status: string | undefined, usage: Usage, failure: string | undefined): ParseStep {
  const failed = status === 'failed';
  return {
    state,
    outputs: [{ kind: 'usage', usage }],
    terminal: {
      ok: !failed,
      interrupted: status === 'interrupted',
      error: failed ? (failure ?? state.lastError ?? 'turn failed') : null,
    },
  };
}
