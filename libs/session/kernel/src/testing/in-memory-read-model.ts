import type { Page, SessionListQuery, SessionReadModel, SessionRecord } from '@berth/ports';

/** The session read model in memory: upserts never move a row backwards (by `last_seq`). */
export class InMemorySessionReadModel implements SessionReadModel {
  private readonly rows = new Map<string, SessionRecord>();
  upserts = 0;

  async upsert(session: SessionRecord): Promise<void> {
    this.upserts++;
    const current = this.rows.get(session.id);
    if (current && current.last_seq >= session.last_seq) return;
    this.rows.set(session.id, session);
  }

  async get(ownerId: string, id: string): Promise<SessionRecord | null> {
    const row = this.rows.get(id);
    return row && row.owner_id === ownerId ? row : null;
  }

  async getById(id: string): Promise<SessionRecord | null> {
    return this.rows.get(id) ?? null;
  }

  async list(ownerId: string, query: SessionListQuery): Promise<Page<SessionRecord>> {
    const data = [...this.rows.values()].filter((r) => r.owner_id === ownerId && (query.include_archived || r.archived_at === null)).slice(0, query.limit);
    return { data, next_page: null };
  }
}
