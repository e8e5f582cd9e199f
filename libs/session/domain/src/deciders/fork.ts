import { BerthError, IllegalStateError } from '@berth/core';
import type { SessionCommandOf, SessionEvent } from '@berth/contracts';
import { requireExists, requireTurnEligible } from '../guards';
import type { ForkPoint, SessionState } from '../state';

export const ForkErrorCodes = {
  /** The event id (or seq) names no `user.message` of this session. */
  FORK_EVENT_UNKNOWN: 'FORK_EVENT_UNKNOWN',
  /** The turn it names has not finished yet. */
  FORK_TURN_RUNNING: 'FORK_TURN_RUNNING',
  /** The turn finished but cannot be forked from (failed, no checkpoint, or its workspace snapshot is gone). */
  FORK_POINT_UNAVAILABLE: 'FORK_POINT_UNAVAILABLE',
  /** The sandbox-manager that ran the turn keeps workspaces that take no per-turn snapshots (`volume`, Kubernetes). */
  FORK_WORKSPACE_UNSUPPORTED: 'FORK_WORKSPACE_UNSUPPORTED',
} as const;

type Selector = Readonly<{ event_id: string | null; seq: number | null }>;

const unknownEvent = (selector: Selector) =>
  new BerthError(
    ForkErrorCodes.FORK_EVENT_UNKNOWN,
    400,
    selector.event_id !== null
      ? `event ${selector.event_id} is not a user.message of this session (fork names a turn by its user.message event id)`
      : `seq ${selector.seq} is not a user.message of this session (fork names a turn by its user.message seq)`,
    selector.event_id !== null ? { event_id: selector.event_id } : { seq: selector.seq },
  );

const unavailable = (point: ForkPoint, why: string) =>
  new IllegalStateError(ForkErrorCodes.FORK_POINT_UNAVAILABLE, `turn ${point.turn_id} cannot be forked from: ${why}`, { turn_id: point.turn_id });

/**
 * The turn a fork continues from. Named by its `user.message` (event id or seq) or, by default,
 * the latest completed turn. Only a completed turn with its checkpoint and workspace snapshot is a
 * fork point: a fork must start from exactly the files and conversation that turn left.
 */
export function forkPointOf(state: SessionState, selector: Selector): ForkPoint {
  const named = selector.event_id !== null || selector.seq !== null;
  const matches = (m: Readonly<{ event_id: string; seq: number }> | null | undefined): boolean =>
    m != null && (selector.event_id !== null ? m.event_id === selector.event_id : m.seq === selector.seq);
  let point: ForkPoint | undefined;
  if (named) {
    point = state.fork_points.find((p) => matches(p.message));
    if (point === undefined) {
      const pending = Object.entries(state.turn_messages).find(([, m]) => matches(m));
      if (pending !== undefined) {
        throw new IllegalStateError(ForkErrorCodes.FORK_TURN_RUNNING, `turn ${pending[0]} has not finished yet; fork from it once it is idle`, { turn_id: pending[0] });
      }
      throw unknownEvent(selector);
    }
  } else {
    point = [...state.fork_points].reverse().find((p) => p.status === 'COMPLETED');
    if (point === undefined) {
      const running = state.current_turn?.id;
      if (running !== undefined) throw new IllegalStateError(ForkErrorCodes.FORK_TURN_RUNNING, `turn ${running} has not finished yet and no earlier turn completed`, { turn_id: running });
      throw new IllegalStateError(ForkErrorCodes.FORK_POINT_UNAVAILABLE, 'the session has no completed turn to fork from');
    }
  }
  if (point.status === 'FAILED') throw unavailable(point, 'it failed (fork from a completed turn)');
  if (point.checkpoint === null) throw unavailable(point, 'no checkpoint was recorded at its end (it was recovered, or ran before checkpoints existed)');
  if (point.checkpoint.workspace === null && point.checkpoint.workspace_unsupported === true) {
    throw new IllegalStateError(
      ForkErrorCodes.FORK_WORKSPACE_UNSUPPORTED,
      `turn ${point.turn_id} cannot be forked from: the sandbox-manager keeps this session's workspace where it takes no per-turn snapshots (volume workspaces, BERTH_WORKSPACE_STORAGE=volume, or the Kubernetes runtime); forking needs loop workspaces`,
      { turn_id: point.turn_id },
    );
  }
  if (point.checkpoint.workspace === null) {
    throw unavailable(point, "no workspace snapshot of it is kept (the environment's config.workspace_snapshots retention removed it, or snapshots are off or unsupported for this workspace kind)");
  }
  return point;
}

/** Records that `fork_session_id` continues from a turn of this session; the fork's own CreateSession carries the origin. */
export function decideForkSession(command: SessionCommandOf<'ForkSession'>, state: SessionState): SessionEvent[] {
  requireExists(state, command.meta.session_id);
  requireTurnEligible(state, { rejectTerminated: false });
  const { fork_session_id, event_id, seq } = command.data;
  const point = forkPointOf(state, { event_id, seq });
  return [
    {
      type: 'ForkCreated',
      data: {
        fork_session_id,
        turn_id: point.turn_id,
        event_id: point.message?.event_id ?? null,
        seq: point.message?.seq ?? null,
        harness_session_id: point.harness_session_id,
        transcript: point.checkpoint?.transcript ?? [],
      },
    },
  ];
}
