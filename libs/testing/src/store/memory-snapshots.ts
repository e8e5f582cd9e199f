import type { SessionSnapshot, SessionSnapshots } from '@berth/ports';
import type { PreparedCommit } from '@berth/store/shared';

export class MemorySnapshots implements SessionSnapshots {
  private readonly snapshots = new Map<string, SessionSnapshot>();

  async load(sessionId: string): Promise<SessionSnapshot | null> {
    const snapshot = this.snapshots.get(sessionId);
    return snapshot ? structuredClone(snapshot) : null;
  }

  /** Written by MemoryJournal.commit only. */
  put(sessionId: string, snapshot: NonNullable<PreparedCommit['snapshot']>): void {
    this.snapshots.set(sessionId, { sessionId, version: snapshot.version, state: JSON.parse(snapshot.state), updatedAt: snapshot.updatedAt });
  }

  version(sessionId: string): number | null {
    return this.snapshots.get(sessionId)?.version ?? null;
  }

  ids(): readonly string[] {
    return [...this.snapshots.keys()];
  }
}
