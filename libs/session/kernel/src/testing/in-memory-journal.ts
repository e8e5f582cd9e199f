import { ConcurrencyError, ValidationError } from '@berth/core';
import type { RecordedEvent } from '@berth/contracts';
import type { CommandCommit, JournalQuery, OutboxPage, OutboxQuery, PublishedMark, SessionJournal } from '@berth/ports';
import { InMemorySessionReadModel } from './in-memory-read-model';
import { InMemorySnapshots } from './in-memory-snapshots';

/**
 * A journal in memory with the adapters' commit rules: one commit per command writing its events,
 * snapshot and row together; a taken seq is a ConcurrencyError and nothing of the commit is kept;
 * the same commit again (a retry after a lost answer) is a no-op.
 */
export class InMemoryJournal implements SessionJournal {
  private readonly bySession = new Map<string, RecordedEvent[]>();
  private readonly published = new Set<string>();
  /** Every commit that landed, in order (what a test inspects to see what a command wrote). */
  readonly commits: CommandCommit[] = [];
  /** Makes the next commits lose a race (as if another writer took the seq first). */
  failNextCommitWithConflict = 0;

  constructor(
    readonly snapshots: InMemorySnapshots = new InMemorySnapshots(),
    readonly sessions: InMemorySessionReadModel = new InMemorySessionReadModel(),
  ) {}

  async commit(commit: CommandCommit): Promise<void> {
    const { sessionId, events } = commit;
    const existing = this.bySession.get(sessionId) ?? [];
    const first = events[0];
    if (first === undefined) throw new ValidationError('a commit holds at least one event', 'events');
    if (this.failNextCommitWithConflict > 0) {
      this.failNextCommitWithConflict--;
      throw new ConcurrencyError(`seq ${first.seq} of ${sessionId} already taken`);
    }
    if (existing[first.seq - 1]?.id === first.id) return;
    if (events.some((e, i) => e.seq !== existing.length + 1 + i)) throw new ConcurrencyError(`seq ${first.seq} of ${sessionId} already taken`);
    this.bySession.set(sessionId, [...existing, ...events]);
    this.commits.push(commit);
    if (commit.snapshot) this.snapshots.put(commit.snapshot);
    if (commit.record) this.sessions.put(commit.record);
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

  /** One page holding everything unpublished, in commit order. */
  async unpublished(query: OutboxQuery): Promise<OutboxPage> {
    if (query.after) return { events: [], next: null };
    const pending = this.commits.flatMap((c) => c.events).filter((e) => !this.published.has(`${e.session_id}:${e.seq}`));
    return { events: pending.slice(0, query.limit), next: null };
  }

  async unpublishedBefore(sessionId: string, seq: number): Promise<RecordedEvent[]> {
    return (this.bySession.get(sessionId) ?? []).filter((e) => e.seq < seq && !this.published.has(`${e.session_id}:${e.seq}`));
  }

  async markPublished(marks: readonly PublishedMark[]): Promise<void> {
    for (const { sessionId, seqs } of marks) for (const seq of seqs) this.published.add(`${sessionId}:${seq}`);
  }

  /** Forgets a session's events, as a store restored from a backup taken before them would. */
  truncate(sessionId: string, lastSeq: number): void {
    this.bySession.set(sessionId, (this.bySession.get(sessionId) ?? []).slice(0, lastSeq));
  }

  all(sessionId: string): readonly RecordedEvent[] {
    return this.bySession.get(sessionId) ?? [];
  }
}
