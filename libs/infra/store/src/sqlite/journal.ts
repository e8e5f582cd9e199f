import { ConcurrencyError } from '@berth/core';
import type { RecordedEvent } from '@berth/contracts';
import type { CommandCommit, JournalQuery, PublishedMark, SessionJournal } from '@berth/ports';
import { batchRange, gapError } from '../shared/checks';
import { checkLimit } from '../shared/paging';
import { GroupCommit } from './group-commit';
import type { SqliteSessions } from './sessions';
import type { SqliteSnapshots } from './snapshots';
import { isConstraintError, type SqliteDb } from './sqlite-db';

type BodyRow = { body: string };
const parse = (rows: unknown[]): RecordedEvent[] => (rows as BodyRow[]).map((r) => JSON.parse(r.body) as RecordedEvent);

/** The rows besides the journal that a command commit writes in the same transaction. */
export type CommitWriters = Readonly<{ snapshots: SqliteSnapshots; sessions: SqliteSessions }>;

export class SqliteJournal implements SessionJournal {
  private readonly group: GroupCommit<CommandCommit>;

  constructor(
    private readonly db: SqliteDb,
    private readonly writers: CommitWriters,
  ) {
    this.group = new GroupCommit(db, (commit) => this.writeCommit(commit));
  }

  async appendEvents(sessionId: string, events: readonly RecordedEvent[]): Promise<void> {
    this.db.write(() => this.append(sessionId, events));
  }

  /** Group commit: see `GroupCommit`. Each command keeps its own all-or-nothing savepoint. */
  commitCommand(commit: CommandCommit): Promise<void> {
    return this.group.submit(commit);
  }

  async readEvents(sessionId: string, query: JournalQuery = {}): Promise<RecordedEvent[]> {
    const where = ['session_id = ?'];
    const params: unknown[] = [sessionId];
    if (query.afterSeq !== undefined) {
      where.push('seq > ?');
      params.push(query.afterSeq);
    }
    if (query.beforeSeq !== undefined) {
      where.push('seq < ?');
      params.push(query.beforeSeq);
    }
    if (query.types) {
      if (query.types.length === 0) return [];
      where.push(`type IN (${query.types.map(() => '?').join(', ')})`);
      params.push(...query.types);
    }
    let sql = `SELECT body FROM journal WHERE ${where.join(' AND ')} ORDER BY seq ${query.order === 'desc' ? 'DESC' : 'ASC'}`;
    if (query.limit !== undefined) {
      sql += ' LIMIT ?';
      params.push(checkLimit(query.limit));
    }
    return parse(this.db.stmt(sql).all(...params));
  }

  async lastSeq(sessionId: string): Promise<number> {
    return this.last(sessionId);
  }

  async eventsOfCommand(sessionId: string, commandId: string): Promise<RecordedEvent[]> {
    // Asked once per command and almost always empty: an index-only probe first.
    if (this.db.stmt('SELECT 1 FROM journal WHERE session_id = ? AND command_id = ? LIMIT 1').pluck().get(sessionId, commandId) === undefined) return [];
    return parse(this.db.stmt('SELECT body FROM journal WHERE session_id = ? AND command_id = ? ORDER BY seq').all(sessionId, commandId));
  }

  async unpublished(limit: number): Promise<RecordedEvent[]> {
    return parse(this.db.stmt('SELECT body FROM journal WHERE published = 0 ORDER BY rowid LIMIT ?').all(checkLimit(limit)));
  }

  async markPublished(sessionId: string, seqs: readonly number[]): Promise<void> {
    await this.markPublishedMany([{ sessionId, seqs }]);
  }

  async markPublishedMany(marks: readonly PublishedMark[]): Promise<void> {
    const mark = this.db.stmt('UPDATE journal SET published = 1 WHERE session_id = ? AND seq = ? AND published = 0');
    this.db.write(() => {
      for (const { sessionId, seqs } of marks) for (const seq of seqs) mark.run(sessionId, seq);
    });
  }

  /** Inside a transaction: the append check and insert, all or nothing with the caller's rollback. */
  private append(sessionId: string, events: readonly RecordedEvent[]): void {
    const range = batchRange(sessionId, events);
    if (!range) return;
    const insert = this.db.stmt('INSERT INTO journal (session_id, seq, type, command_id, occurred_at, body) VALUES (?, ?, ?, ?, ?, ?)');
    try {
      const last = this.last(sessionId);
      if (range.from <= last) throw this.conflict(sessionId, range.from, last);
      if (range.from > last + 1) throw gapError(sessionId, range.from, last);
      for (const e of events) insert.run(sessionId, e.seq, e.type, e.command_id, e.occurred_at, JSON.stringify(e));
    } catch (e) {
      // Another process on the same file can only win between our read and insert if it bypassed
      // the write lock; the primary key still turns that into a conflict, and the rollback drops the batch.
      if (isConstraintError(e)) throw this.conflict(sessionId, range.from, this.last(sessionId));
      throw e;
    }
  }

  private writeCommit(commit: CommandCommit): void {
    this.append(commit.sessionId, commit.events);
    if (commit.snapshot) this.writers.snapshots.write(commit.snapshot.snapshot, commit.snapshot.expectedVersion);
    if (commit.record) this.writers.sessions.write(commit.record);
  }

  private last(sessionId: string): number {
    const row = this.db.stmt('SELECT MAX(seq) AS last FROM journal WHERE session_id = ?').get(sessionId) as { last: number | null };
    return row.last ?? 0;
  }

  private conflict(sessionId: string, from: number, last: number): ConcurrencyError {
    return new ConcurrencyError(`session ${sessionId}: seq ${from} is already taken (last seq ${last})`);
  }
}
