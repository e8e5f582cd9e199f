import { ConcurrencyError, ValidationError } from '@berth/core';
import type { RecordedEvent } from '@berth/contracts';
import type { CommandCommit, JournalQuery, OutboxPage, OutboxQuery, PublishedMark, SessionJournal } from '@berth/ports';
import { commitVerdict, prepareCommit, type PreparedCommit } from '../shared/commit';
import { checkLimit } from '../shared/paging';
import { GroupCommit } from './group-commit';
import type { SqliteSessions } from './sessions';
import type { SqliteSnapshots } from './snapshots';
import { isConstraintError, type SqliteDb } from './sqlite-db';

type BodyRow = { body: string };
const parse = (rows: unknown[]): RecordedEvent[] => (rows as BodyRow[]).map((r) => JSON.parse(r.body) as RecordedEvent);

/** The rows besides the journal that a command commit writes in the same transaction. */
export type CommitWriters = Readonly<{ snapshots: SqliteSnapshots; sessions: SqliteSessions }>;

/**
 * The journal, and the one writer of snapshots and read-model rows: a commit is one transaction
 * (shared by the commands committing in the same event-loop turn, see GroupCommit). A session's
 * position is MAX(seq) of its rows, nothing else; the outbox is the `published = 0` rows in rowid
 * (commit) order.
 */
export class SqliteJournal implements SessionJournal {
  private readonly group: GroupCommit<PreparedCommit>;

  constructor(
    private readonly db: SqliteDb,
    private readonly writers: CommitWriters,
  ) {
    this.group = new GroupCommit(db, (commit) => this.write(commit));
  }

  async commit(commit: CommandCommit): Promise<void> {
    await this.group.submit(prepareCommit(commit));
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

  async unpublished(query: OutboxQuery): Promise<OutboxPage> {
    const limit = checkLimit(query.limit);
    const rows = this.db.stmt('SELECT rowid AS position, body FROM journal WHERE published = 0 AND rowid > ? ORDER BY rowid LIMIT ?').all(afterPosition(query.after), limit) as (BodyRow & {
      position: number;
    })[];
    const last = rows[rows.length - 1];
    return { events: parse(rows), next: rows.length === limit && last ? String(last.position) : null };
  }

  async unpublishedBefore(sessionId: string, seq: number): Promise<RecordedEvent[]> {
    return parse(this.db.stmt('SELECT body FROM journal WHERE published = 0 AND session_id = ? AND seq < ? ORDER BY seq').all(sessionId, seq));
  }

  async markPublished(marks: readonly PublishedMark[]): Promise<void> {
    const mark = this.db.stmt('UPDATE journal SET published = 1 WHERE session_id = ? AND seq = ? AND published = 0');
    this.db.write(() => {
      for (const { sessionId, seqs } of marks) for (const seq of seqs) mark.run(sessionId, seq);
    });
  }

  /** Inside the group's transaction: the position check, then every row of the commit. */
  private write(commit: PreparedCommit): void {
    const last = this.last(commit.sessionId);
    const idAtFrom = commit.from <= last ? this.eventIdAt(commit.sessionId, commit.from) : null;
    if (commitVerdict(commit, last, idAtFrom) === 'already-committed') return;
    const insert = this.db.stmt('INSERT INTO journal (session_id, seq, type, command_id, occurred_at, body) VALUES (?, ?, ?, ?, ?, ?)');
    try {
      for (const { event, body } of commit.events) insert.run(commit.sessionId, event.seq, event.type, event.command_id, event.occurred_at, body);
    } catch (e) {
      // Only a writer that bypassed the write lock could take a seq between our read and insert;
      // the primary key still makes it a lost race, and the caller's rollback drops the commit.
      if (isConstraintError(e)) throw new ConcurrencyError(`session ${commit.sessionId}: seq ${commit.from} was taken by another writer`);
      throw e;
    }
    if (commit.snapshot) this.writers.snapshots.write(commit.sessionId, commit.snapshot);
    if (commit.record) this.writers.sessions.write(commit.record.record, commit.record.json);
  }

  private last(sessionId: string): number {
    const row = this.db.stmt('SELECT MAX(seq) AS last FROM journal WHERE session_id = ?').get(sessionId) as { last: number | null };
    return row.last ?? 0;
  }

  /** Only asked when a commit's first seq is taken (a lost race, or a retry of this very commit). */
  private eventIdAt(sessionId: string, seq: number): string | null {
    return (this.db.stmt("SELECT json_extract(body, '$.id') FROM journal WHERE session_id = ? AND seq = ?").pluck().get(sessionId, seq) as string | undefined) ?? null;
  }
}

/** Outbox cursors are the rowid of the last row served. */
function afterPosition(after: string | null | undefined): number {
  if (after === undefined || after === null || after === '') return 0;
  const position = Number(after);
  if (!Number.isSafeInteger(position) || position < 0) throw new ValidationError('after is not an outbox cursor of this store', 'after');
  return position;
}
