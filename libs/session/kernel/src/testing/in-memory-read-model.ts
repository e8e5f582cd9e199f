import type { Page, SessionListQuery, SessionReadModel, SessionRecord } from '@berth/ports';

/** The session read model in memory, written by InMemoryJournal.commit. */
export class InMemorySessionReadModel implements SessionReadModel {
  private readonly rows = new Map<string, SessionRecord>();
  writes = 0;

  put(session: SessionRecord): void {
    this.writes++;
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
