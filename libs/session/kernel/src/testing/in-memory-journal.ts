import { ConcurrencyError } from '@berth/core';
import type { RecordedEvent } from '@berth/contracts';
import type { JournalQuery, SessionJournal } from '@berth/ports';

/** A journal in memory with the adapters' commit rule: a taken seq is a ConcurrencyError, never a partial append. */
export class InMemoryJournal implements SessionJournal {
  private readonly bySession = new Map<string, RecordedEvent[]>();
  private readonly published = new Set<string>();
  /** Every append call, in order (what a test inspects to see what a command wrote). */
  readonly appends: RecordedEvent[][] = [];
  /** Makes the next append lose a race once (as if another writer took the seq first). */
  failNextAppendWithConflict = 0;

  async appendEvents(sessionId: string, events: readonly RecordedEvent[]): Promise<void> {
    const existing = this.bySession.get(sessionId) ?? [];
    if (this.failNextAppendWithConflict > 0) {
      this.failNextAppendWithConflict--;
      throw new ConcurrencyError(`seq ${events[0]?.seq} of ${sessionId} already taken`);
    }
    const expected = existing.length + 1;
    if (events.some((e, i) => e.seq !== expected + i)) throw new ConcurrencyError(`seq ${events[0]?.seq} of ${sessionId} already taken`);
    this.bySession.set(sessionId, [...existing, ...events]);
    this.appends.push([...events]);
  }

  /** Writes events as another kernel would (for races). */
  async appendAsAnotherWriter(sessionId: string, events: readonly RecordedEvent[]): Promise<void> {
    const existing = this.bySession.get(sessionId) ?? [];
    this.bySession.set(sessionId, [...existing, ...events]);
  }

  async readEvents(sessionId: string, query: JournalQuery = {}): Promise<RecordedEvent[]> {
    let events = [...(this.bySession.get(sessionId) ?? [])];
    if (query.afterSeq !== undefined) events = events.filter((e) => e.seq > query.afterSeq!);
    if (query.beforeSeq !== undefined) events = events.filter((e) => e.seq < query.beforeSeq!);
    if (query.types) events = events.filter((e) => query.types!.includes(e.type));
    if (query.order === 'desc') events.reverse();
    return query.limit === undefined ? events : events.slice(0, query.limit);
  }

  async lastSeq(sessionId: string): Promise<number> {
    return this.bySession.get(sessionId)?.length ?? 0;
  }

  async eventsOfCommand(sessionId: string, commandId: string): Promise<RecordedEvent[]> {
    return (this.bySession.get(sessionId) ?? []).filter((e) => e.command_id === commandId);
  }

  async unpublished(limit: number): Promise<RecordedEvent[]> {
    return [...this.bySession.values()].flat().filter((e) => !this.published.has(`${e.session_id}:${e.seq}`)).slice(0, limit);
  }

  async markPublished(sessionId: string, seqs: readonly number[]): Promise<void> {
    for (const seq of seqs) this.published.add(`${sessionId}:${seq}`);
  }

  all(sessionId: string): readonly RecordedEvent[] {
    return this.bySession.get(sessionId) ?? [];
  }
}
