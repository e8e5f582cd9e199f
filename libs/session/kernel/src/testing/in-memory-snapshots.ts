import type { SessionSnapshot, SessionSnapshots } from '@berth/ports';

/** Snapshots in memory, written by InMemoryJournal.commit; can be told to fail loads or to leave writes out. */
export class InMemorySnapshots implements SessionSnapshots {
  private readonly stored = new Map<string, SessionSnapshot>();
  /** Every snapshot a commit carried, stored or not. */
  readonly writes: SessionSnapshot[] = [];
  loads = 0;
  failLoads = false;
  /** Leave commits' snapshots out, as a store does with one too large to hold (the stored one lags). */
  leaveOut = false;

  async load(sessionId: string): Promise<SessionSnapshot | null> {
    this.loads++;
    if (this.failLoads) throw new Error('snapshot store unavailable');
    return this.stored.get(sessionId) ?? null;
  }

  put(snapshot: SessionSnapshot): void {
    this.writes.push(snapshot);
    if (!this.leaveOut) this.stored.set(snapshot.sessionId, snapshot);
  }

  get(sessionId: string): SessionSnapshot | null {
    return this.stored.get(sessionId) ?? null;
  }
}
