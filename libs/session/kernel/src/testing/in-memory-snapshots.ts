import type { SessionSnapshot, SessionSnapshots } from '@berth/ports';

/** Snapshots in memory with the version check; can be told to fail, to pin that snapshots are best effort. */
export class InMemorySnapshots implements SessionSnapshots {
  private readonly stored = new Map<string, SessionSnapshot>();
  readonly saves: SessionSnapshot[] = [];
  loads = 0;
  failSaves = false;
  failLoads = false;

  async load(sessionId: string): Promise<SessionSnapshot | null> {
    this.loads++;
    if (this.failLoads) throw new Error('snapshot store unavailable');
    return this.stored.get(sessionId) ?? null;
  }

  async save(snapshot: SessionSnapshot, expectedVersion: number): Promise<boolean> {
    this.saves.push(snapshot);
    if (this.failSaves) throw new Error('snapshot write failed');
    const current = this.stored.get(snapshot.sessionId)?.version ?? 0;
    if (current !== expectedVersion) return false;
    this.stored.set(snapshot.sessionId, snapshot);
    return true;
  }

  get(sessionId: string): SessionSnapshot | null {
    return this.stored.get(sessionId) ?? null;
  }
}
