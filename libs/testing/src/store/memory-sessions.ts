import { parseIsoUtc, ValidationError } from '@berth/core';
import type { Page, SessionListQuery, SessionReadModel, SessionRecord } from '@berth/ports';
import { pageRows } from './paging';

type Range = NonNullable<SessionListQuery['created_at']>;

export class MemorySessions implements SessionReadModel {
  private readonly sessions = new Map<string, SessionRecord>();

  /** Written by MemoryJournal.commit only, from the row's JSON (as the database adapters store it). */
  put(json: string): void {
    const session = JSON.parse(json) as SessionRecord;
    this.sessions.set(session.id, session);
  }

  lastSeq(id: string): number | null {
    return this.sessions.get(id)?.last_seq ?? null;
  }

  ids(): readonly string[] {
    return [...this.sessions.keys()];
  }

  async get(ownerId: string, id: string): Promise<SessionRecord | null> {
    const s = this.sessions.get(id);
    return s && s.owner_id === ownerId ? structuredClone(s) : null;
  }

  async getById(id: string): Promise<SessionRecord | null> {
    const s = this.sessions.get(id);
    return s ? structuredClone(s) : null;
  }

  async list(ownerId: string, query: SessionListQuery): Promise<Page<SessionRecord>> {
    const inRange = rangeTest(query.created_at);
    const rows = [...this.sessions.values()].filter(
      (s) =>
        s.owner_id === ownerId &&
        !s.deleted &&
        (query.include_archived || s.archived_at === null) &&
        (query.agent_id === undefined || s.agent_id === query.agent_id) &&
        (query.agent_version === undefined || s.agent_version === query.agent_version) &&
        (!query.statuses || query.statuses.includes(s.status)) &&
        inRange(s.created_at),
    );
    return structuredClone(pageRows('sessions', rows, query, (s) => [s.created_at, s.id]));
  }
}

function rangeTest(range: Range | undefined): (createdAt: string) => boolean {
  const bound = (op: keyof Range): string | undefined => {
    const value = range?.[op];
    if (value === undefined) return undefined;
    const date = parseIsoUtc(value);
    if (!date) throw new ValidationError(`created_at[${op}] must be an ISO-8601 timestamp`, `created_at[${op}]`);
    return date.toISOString();
  };
  const [gt, gte, lt, lte] = [bound('gt'), bound('gte'), bound('lt'), bound('lte')];
  return (c) => (gt === undefined || c > gt) && (gte === undefined || c >= gte) && (lt === undefined || c < lt) && (lte === undefined || c <= lte);
}
