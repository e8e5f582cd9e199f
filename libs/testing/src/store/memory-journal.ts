import type { RecordedEvent } from '@berth/contracts';
import { ValidationError } from '@berth/core';
import type { CommandCommit, JournalQuery, OutboxPage, OutboxQuery, PublishedMark, SessionJournal } from '@berth/ports';
import { checkLimit, commitVerdict, prepareCommit } from '@berth/store/shared';
import type { MemorySessions } from './memory-sessions';
import type { MemorySnapshots } from './memory-snapshots';

type Row = { event: RecordedEvent; published: boolean; position: number };

/** The journal in a Map: same commit, conflict, gap and outbox semantics as the database adapters. */
export class MemoryJournal implements SessionJournal {
  private readonly bySession = new Map<string, Row[]>();
  private position = 0;
  /** Test knob: while set, a commit with a read-model row fails on that row, its last write; nothing of it remains. */
  failRowWrites = false;

  constructor(private readonly derived: Readonly<{ snapshots: MemorySnapshots; sessions: MemorySessions }>) {}

  async commit(commit: CommandCommit): Promise<void> {
    const prepared = prepareCommit(commit);
    const rows = this.bySession.get(prepared.sessionId) ?? [];
    const idAtFrom = rows[prepared.from - 1]?.event.id ?? null;
    if (commitVerdict(prepared, rows.length, idAtFrom) === 'already-committed') return;
    // Everything is checked before anything is applied: the commit lands whole or not at all.
    if (prepared.record && this.failRowWrites) {
      throw new Error(`injected failure writing session ${prepared.sessionId}'s read-model row`);
    }
    rows.push(...prepared.events.map(({ body }) => ({ event: JSON.parse(body) as RecordedEvent, published: false, position: ++this.position })));
    this.bySession.set(prepared.sessionId, rows);
    if (prepared.snapshot) this.derived.snapshots.put(prepared.sessionId, prepared.snapshot);
    if (prepared.record) this.derived.sessions.put(prepared.record.json);
  }

  async readEvents(sessionId: string, query: JournalQuery = {}): Promise<RecordedEvent[]> {
    if (query.limit !== undefined) checkLimit(query.limit);
    const matching = (this.bySession.get(sessionId) ?? [])
      .map((r) => r.event)
      .filter((e) => (query.afterSeq === undefined || e.seq > query.afterSeq) && (query.beforeSeq === undefined || e.seq < query.beforeSeq))
      .filter((e) => !query.types || query.types.includes(e.type));
    if (query.order === 'desc') matching.reverse();
    return structuredClone(matching.slice(0, query.limit ?? matching.length));
  }

  async lastSeq(sessionId: string): Promise<number> {
    return this.bySession.get(sessionId)?.length ?? 0;
  }

  async eventsOfCommand(sessionId: string, commandId: string): Promise<RecordedEvent[]> {
    return structuredClone((this.bySession.get(sessionId) ?? []).map((r) => r.event).filter((e) => e.command_id === commandId));
  }

  async unpublished(query: OutboxQuery): Promise<OutboxPage> {
    const limit = checkLimit(query.limit);
    const after = query.after === undefined || query.after === null || query.after === '' ? 0 : Number(query.after);
    if (!Number.isSafeInteger(after) || after < 0) throw new ValidationError('after is not an outbox cursor of this store', 'after');
    const rows = [...this.bySession.values()]
      .flat()
      .filter((r) => !r.published && r.position > after)
      .sort((a, b) => a.position - b.position)
      .slice(0, limit);
    const last = rows[rows.length - 1];
    return { events: structuredClone(rows.map((r) => r.event)), next: rows.length === limit && last ? String(last.position) : null };
  }

  async unpublishedBefore(sessionId: string, seq: number): Promise<RecordedEvent[]> {
    return structuredClone((this.bySession.get(sessionId) ?? []).filter((r) => !r.published && r.event.seq < seq).map((r) => r.event));
  }

  async markPublished(marks: readonly PublishedMark[]): Promise<void> {
    for (const { sessionId, seqs } of marks) {
      const rows = this.bySession.get(sessionId) ?? [];
      for (const seq of seqs) {
        const row = rows[seq - 1];
        if (row) row.published = true;
      }
    }
  }

  /** For the inspection: every session's rows. */
  sessions(): ReadonlyMap<string, readonly Readonly<Row>[]> {
    return this.bySession;
  }
}
