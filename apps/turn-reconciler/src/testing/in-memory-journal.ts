import type { RecordedEvent } from '@berth/contracts';
import { ConcurrencyError } from '@berth/core';
import type { CommandCommit, JournalQuery, OutboxPage, OutboxQuery, PublishedMark, SessionJournal } from '@berth/ports';

/** A journal in memory; `outage` makes every call fail the way an unreachable store does. */
export class InMemoryJournal implements SessionJournal {
  private readonly bySession = new Map<string, RecordedEvent[]>();
  private readonly published = new Set<string>();
  outage = false;

  async commit({ sessionId, events }: CommandCommit): Promise<void> {
    this.check();
    const current = this.bySession.get(sessionId) ?? [];
    const last = current.length;
    events.forEach((e, i) => {
      if (e.seq !== last + i + 1) throw new ConcurrencyError(`seq ${e.seq} of ${sessionId} is taken`);
    });
    this.bySession.set(sessionId, [...current, ...events]);
  }

  async readEvents(sessionId: string, query: JournalQuery = {}): Promise<RecordedEvent[]> {
    this.check();
    let events = [...(this.bySession.get(sessionId) ?? [])];
    if (query.afterSeq !== undefined) events = events.filter((e) => e.seq > (query.afterSeq as number));
    if (query.beforeSeq !== undefined) events = events.filter((e) => e.seq < (query.beforeSeq as number));
    if (query.types) events = events.filter((e) => query.types?.includes(e.type));
    if (query.order === 'desc') events.reverse();
    return query.limit === undefined ? events : events.slice(0, query.limit);
  }

  async lastSeq(sessionId: string): Promise<number> {
    this.check();
    return this.bySession.get(sessionId)?.length ?? 0;
  }

  async eventsOfCommand(sessionId: string, commandId: string): Promise<RecordedEvent[]> {
    this.check();
    return (this.bySession.get(sessionId) ?? []).filter((e) => e.command_id === commandId);
  }

  async unpublished({ limit, after }: OutboxQuery): Promise<OutboxPage> {
    this.check();
    if (after) return { events: [], next: null };
    return { events: [...this.bySession.values()].flat().filter((e) => !this.published.has(`${e.session_id}/${e.seq}`)).slice(0, limit), next: null };
  }

  async unpublishedBefore(sessionId: string, seq: number): Promise<RecordedEvent[]> {
    this.check();
    return (this.bySession.get(sessionId) ?? []).filter((e) => e.seq < seq && !this.published.has(`${e.session_id}/${e.seq}`));
  }

  async markPublished(marks: readonly PublishedMark[]): Promise<void> {
    this.check();
    for (const { sessionId, seqs } of marks) for (const seq of seqs) this.published.add(`${sessionId}/${seq}`);
  }

  /** Everything of one session, for assertions (ignores the outage switch). */
  all(sessionId: string): readonly RecordedEvent[] {
    return this.bySession.get(sessionId) ?? [];
  }

  private check(): void {
    if (this.outage) throw new Error('store unavailable: connection refused');
  }
}
