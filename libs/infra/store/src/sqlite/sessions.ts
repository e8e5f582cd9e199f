import type { Page, SessionListQuery, SessionReadModel, SessionRecord } from '@berth/ports';
import { isoRange } from '../shared/checks';
import { checkLimit, orderOf, pageOf } from '../shared/paging';
import { keysetPage } from './keyset';
import type { SqliteDb } from './sqlite-db';

type Row = { record: string };
const recordOf = (row: unknown): SessionRecord | null => (row ? (JSON.parse((row as Row).record) as SessionRecord) : null);

export class SqliteSessions implements SessionReadModel {
  constructor(private readonly db: SqliteDb) {}

  /** Inside a commit's transaction: the commit decided the position, so its row replaces the stored one. */
  write(s: SessionRecord, json: string): void {
    this.db
      .stmt(
        `INSERT INTO sessions (id, owner_id, agent_id, agent_version, status, created_at, archived, deleted, last_seq, record)
         VALUES (@id, @owner_id, @agent_id, @agent_version, @status, @created_at, @archived, @deleted, @last_seq, @record)
         ON CONFLICT (id) DO UPDATE SET
           owner_id = excluded.owner_id, agent_id = excluded.agent_id, agent_version = excluded.agent_version,
           status = excluded.status, created_at = excluded.created_at, archived = excluded.archived,
           deleted = excluded.deleted, last_seq = excluded.last_seq, record = excluded.record`,
      )
      .run({
        id: s.id,
        owner_id: s.owner_id,
        agent_id: s.agent_id,
        agent_version: s.agent_version,
        status: s.status,
        created_at: s.created_at,
        archived: s.archived_at === null ? 0 : 1,
        deleted: s.deleted ? 1 : 0,
        last_seq: s.last_seq,
        record: json,
      });
  }

  async get(ownerId: string, id: string): Promise<SessionRecord | null> {
    return recordOf(this.db.stmt('SELECT record FROM sessions WHERE id = ? AND owner_id = ?').get(id, ownerId));
  }

  async getById(id: string): Promise<SessionRecord | null> {
    return recordOf(this.db.stmt('SELECT record FROM sessions WHERE id = ?').get(id));
  }

  async list(ownerId: string, query: SessionListQuery): Promise<Page<SessionRecord>> {
    const limit = checkLimit(query.limit);
    const order = orderOf(query.order);
    const page = keysetPage('sessions', order, query.page);
    const where = ['owner_id = ?', 'deleted = 0', ...page.where];
    const params: unknown[] = [ownerId, ...page.params];
    if (!query.include_archived) where.push('archived = 0');
    if (query.agent_id !== undefined) {
      where.push('agent_id = ?');
      params.push(query.agent_id);
    }
    if (query.agent_version !== undefined) {
      where.push('agent_version = ?');
      params.push(query.agent_version);
    }
    if (query.statuses) {
      if (query.statuses.length === 0) return { data: [], next_page: null };
      where.push(`status IN (${query.statuses.map(() => '?').join(', ')})`);
      params.push(...query.statuses);
    }
    const range = isoRange(query.created_at);
    const ops = { gt: '>', gte: '>=', lt: '<', lte: '<=' } as const;
    for (const [op, value] of Object.entries(range)) {
      where.push(`created_at ${ops[op as keyof typeof ops]} ?`);
      params.push(value);
    }
    const rows = this.db.stmt(`SELECT record FROM sessions WHERE ${where.join(' AND ')} ${page.orderBy} LIMIT ?`).all(...params, limit + 1);
    return pageOf('sessions', order, limit, rows.map((r) => recordOf(r) as SessionRecord), (s) => [s.created_at, s.id]);
  }
}
