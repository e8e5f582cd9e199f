import type { SessionSnapshot, SessionSnapshots } from '@berth/ports';

export class MemorySnapshots implements SessionSnapshots {
  private readonly snapshots = new Map<string, SessionSnapshot>();

  async load(sessionId: string): Promise<SessionSnapshot | null> {
    const snapshot = this.snapshots.get(sessionId);
    return snapshot ? structuredClone(snapshot) : null;
  }

  async save(snapshot: SessionSnapshot, expectedVersion: number): Promise<boolean> {
    const stored = this.snapshots.get(snapshot.sessionId);
    if (expectedVersion === 0 ? stored !== undefined : stored?.version !== expectedVersion) return false;
    this.snapshots.set(snapshot.sessionId, structuredClone(snapshot));
    return true;
  }
}
