import { ConcurrencyError, ValidationError } from '@berth/core';
import type { RecordedEvent } from '@berth/contracts';
import type { JournalQuery, SessionJournal } from '@berth/ports';

type Row = { event: RecordedEvent; published: boolean; position: number };

/** The journal in a Map: same conflict, gap and outbox semantics as the database adapters. */
export class MemoryJournal implements SessionJournal {
  private readonly bySession = new Map<string, Row[]>();
  private position = 0;

  async appendEvents(sessionId: string, events: readonly RecordedEvent[]): Promise<void> {
    const first = events[0];
    if (first === undefined) return;
    events.forEach((e, i) => {
      if (e.session_id !== sessionId) throw new ValidationError(`event ${i} belongs to session ${e.session_id}, not ${sessionId}`, `events.${i}.session_id`);
      if (!Number.isInteger(e.seq) || e.seq < 1 || e.seq !== first.seq + i) throw new ValidationError(`event seqs must be consecutive from ${first.seq}`, `events.${i}.seq`);
    });
    const rows = this.bySession.get(sessionId) ?? [];
    const last = rows.length;
    if (first.seq <= last) throw new ConcurrencyError(`session ${sessionId}: seq ${first.seq} is already taken (last seq ${last})`);
    if (first.seq > last + 1) throw new ValidationError(`session ${sessionId}: seq ${first.seq} does not follow the last seq ${last}`, 'seq');
    rows.push(...events.map((e) => ({ event: structuredClone(e), published: false, position: ++this.position })));
    this.bySession.set(sessionId, rows);
  }

  async readEvents(sessionId: string, query: JournalQuery = {}): Promise<RecordedEvent[]> {
    if (query.limit !== undefined && (!Number.isInteger(query.limit) || query.limit < 1)) throw new ValidationError('limit must be a positive integer', 'limit');
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

  async unpublished(limit: number): Promise<RecordedEvent[]> {
    if (!Number.isInteger(limit) || limit < 1) throw new ValidationError('limit must be a positive integer', 'limit');
    const rows = [...this.bySession.values()].flat().filter((r) => !r.published);
    return structuredClone(rows.sort((a, b) => a.position - b.position).slice(0, limit).map((r) => r.event));
  }

  async markPublished(sessionId: string, seqs: readonly number[]): Promise<void> {
    const rows = this.bySession.get(sessionId) ?? [];
    for (const seq of seqs) {
      const row = rows[seq - 1];
      if (row) row.published = true;
    }
  }
}
