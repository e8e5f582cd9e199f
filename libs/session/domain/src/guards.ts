import { ErrorCodes, IllegalStateError, NotFoundError } from '@berth/core';
import type { SessionState } from './state';

/** Codes the session domain adds to the shared vocabulary in `@berth/core`. */
export const SessionErrorCodes = {
  TOOL_USE_NOT_PENDING: 'TOOL_USE_NOT_PENDING',
  CUSTOM_TOOL_USE_NOT_PENDING: 'CUSTOM_TOOL_USE_NOT_PENDING',
  IDEMPOTENCY_KEY_RETIRED: 'IDEMPOTENCY_KEY_RETIRED',
  SESSION_ARCHIVED: 'SESSION_ARCHIVED',
  RESOURCE_NOT_FOUND: 'RESOURCE_NOT_FOUND',
  MOUNT_PATH_CONFLICT: 'MOUNT_PATH_CONFLICT',
  TOO_MANY_RESOURCES: 'TOO_MANY_RESOURCES',
} as const;

export type TurnEligibility = Readonly<{ rejectTerminated?: boolean; rejectDeleted?: boolean; rejectCreating?: boolean }>;

/**
 * The guard every turn and lifecycle entry point shares. Its flags say which states a command
 * tolerates: convergence commands (terminate, recover, delete, end) pass `rejectTerminated: false`
 * so a TERMINATED session is not a dead end; delete passes `rejectDeleted: false` so a second delete
 * is a well-formed no-op. Defaults: TERMINATED and DELETED rejected, CREATING tolerated.
 */
export function requireTurnEligible(
  state: Pick<SessionState, 'lifecycle'>,
  { rejectTerminated = true, rejectDeleted = true, rejectCreating = false }: TurnEligibility = {},
): void {
  switch (state.lifecycle) {
    case 'CREATING':
      if (rejectCreating) throw new IllegalStateError(ErrorCodes.SESSION_BUSY, 'the session is still being created; retry shortly');
      return;
    case 'TERMINATED':
      if (rejectTerminated) throw new IllegalStateError(ErrorCodes.AGENT_RUNTIME_ERROR, 'the session is terminated; recover it first');
      return;
    case 'DELETED':
      if (rejectDeleted) throw new IllegalStateError(ErrorCodes.AGENT_RUNTIME_ERROR, 'the session is deleted');
      return;
    default:
      return;
  }
}

/** Every command but CreateSession needs the session to exist. */
export function requireExists(state: SessionState, sessionId: string): void {
  if (!state.exists) throw new NotFoundError(`session ${sessionId} not found`);
}
