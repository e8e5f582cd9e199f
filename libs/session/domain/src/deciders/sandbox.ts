import type { EventData, SessionCommandOf, SessionEvent } from '@berth/contracts';
import { requireExists } from '../guards';
import type { SessionState } from '../state';
import { failTurn } from './turn-flow';

/**
 * The sandbox-manager reports facts; the kernel fences them by generation. A fact about an older
 * generation, or about a session that no longer wants a sandbox, is a no-op (the manager then
 * releases what it started).
 */
export function decideBindSandbox(command: SessionCommandOf<'BindSandbox'>, state: SessionState): SessionEvent[] {
  requireExists(state, command.meta.session_id);
  const { sandbox_id, generation, expires_at, warm, lease, host } = command.data;
  if (state.lifecycle === 'TERMINATED' || state.lifecycle === 'DELETED' || state.archived) return [];
  if (state.sandbox_request?.generation !== generation) return [];
  return [{ type: 'SandboxBound', data: { sandbox_id, generation, expires_at, warm, ...(lease && { lease }), ...(host === undefined ? {} : { host }) } }];
}

/** The requested sandbox could not start: the session stays READY without a runtime and a turn waiting for it fails. */
export function decideReportSandboxStartFailed(command: SessionCommandOf<'ReportSandboxStartFailed'>, state: SessionState): SessionEvent[] {
  requireExists(state, command.meta.session_id);
  const { generation, message } = command.data;
  if (state.sandbox_request?.generation !== generation) return [];
  const failed: SessionEvent = { type: 'SandboxStartFailed', data: { generation, message } };
  const turn = state.current_turn;
  if (turn === null || state.sandbox !== null) return [failed];
  // Each queued message then gets its own attempt (a new request), so the retries are bounded by the queue.
  const afterFailure = { ...state, sandbox_request: null, runtime_unavailable: true };
  return [failed, ...failTurn(afterFailure, turn.id, 'sandbox_start_failed', message)];
}

/**
 * A refusal the egress reports for the bound sandbox: recorded for the user to see (the sandbox
 * already got the error). Facts about another generation, or a session that is gone, are dropped.
 */
export function decideReportEgressDenied(command: SessionCommandOf<'ReportEgressDenied'>, state: SessionState): SessionEvent[] {
  requireExists(state, command.meta.session_id);
  const { generation, ...denial } = command.data;
  if (state.lifecycle === 'DELETED' || state.sandbox?.generation !== generation) return [];
  return [{ type: 'EgressDenied', data: { ...denial, generation, turn_id: state.current_turn?.id ?? null } }];
}

export function decideReportSandboxDied(command: SessionCommandOf<'ReportSandboxDied'>, state: SessionState): SessionEvent[] {
  requireExists(state, command.meta.session_id);
  return loseSandbox(state, command.data.sandbox_id, command.data.generation, command.data.cause);
}

export function decideReportSandboxExpired(command: SessionCommandOf<'ReportSandboxExpired'>, state: SessionState): SessionEvent[] {
  requireExists(state, command.meta.session_id);
  return loseSandbox(state, command.data.sandbox_id, command.data.generation, 'expired');
}

/**
 * The bound sandbox is gone: the session stays READY with `runtime_unavailable` (the next message
 * rebuilds) and a turn that was running is handed to the reconciler to recover its transcript.
 */
export function loseSandbox(state: SessionState, sandboxId: string, generation: number, cause: EventData<'SandboxLost'>['cause']): SessionEvent[] {
  const bound = state.sandbox;
  if (bound === null || bound.sandbox_id !== sandboxId || bound.generation !== generation) return [];
  const lost: SessionEvent = { type: 'SandboxLost', data: { sandbox_id: sandboxId, generation, cause } };
  const turn = state.current_turn;
  if (turn === null || turn.recovery_phase === 'TRANSCRIPT_PENDING') return [lost];
  return [lost, { type: 'TurnTranscriptPending', data: { turn_id: turn.id } }];
}

