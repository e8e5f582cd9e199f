import type { SessionSnapshot } from '@berth/ports';
import type { SessionState } from '@berth/session-domain';

/** Snapshots hold the state in a versioned envelope, so a change of state shape just ignores old ones. */
export const SNAPSHOT_FORMAT = 2;
type SnapshotEnvelope = Readonly<{ format: number; session: SessionState }>;

export const envelope = (session: SessionState): SnapshotEnvelope => ({ format: SNAPSHOT_FORMAT, session });

/** The state a stored snapshot holds, or null when it is in another format (then it is folded from the journal). */
export function snapshotSession(snapshot: SessionSnapshot): SessionState | null {
  const value = snapshot.state as SnapshotEnvelope | null;
  return typeof value === 'object' && value !== null && value.format === SNAPSHOT_FORMAT && typeof value.session === 'object' && value.session !== null ? value.session : null;
}
