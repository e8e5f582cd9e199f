import type { Page, SessionListQuery, SessionReadModel, SessionRecord } from '@berth/ports';
import type { Filter } from 'mongodb';
import { isoRange } from '../shared/checks';
import { checkLimit, orderOf, pageOf } from '../shared/paging';
import type { SessionDoc } from './collections';
import { PRIMARY, type MongoContext } from './context';
import { keysetPage } from './keyset';

const recordOf = (doc: { record: string } | null): SessionRecord | null => (doc ? (JSON.parse(doc.record) as SessionRecord) : null);

/** The read-model document of a session row (written by MongoJournal.commit only). */
export const sessionDocOf = (s: SessionRecord, json: string): Omit<SessionDoc, '_id'> => ({
  owner_id: s.owner_id,
  agent_id: s.agent_id,
  agent_version: s.agent_version,
  status: s.status,
  created_at: s.created_at,
  archived: s.archived_at !== null,
  deleted: s.deleted,
  last_seq: s.last_seq,
  record: json,
});

export class MongoSessions implements SessionReadModel {
  constructor(private readonly m: MongoContext) {}

  async get(ownerId: string, id: string): Promise<SessionRecord | null> {
    return recordOf(await this.m.c.sessions.findOne({ _id: id, owner_id: ownerId }, { ...PRIMARY, projection: { record: 1 } }));
  }

  async getById(id: string): Promise<SessionRecord | null> {
    return recordOf(await this.m.c.sessions.findOne({ _id: id }, { ...PRIMARY, projection: { record: 1 } }));
  }

  async list(ownerId: string, query: SessionListQuery): Promise<Page<SessionRecord>> {
    const limit = checkLimit(query.limit);
    const order = orderOf(query.order);
    const page = keysetPage<SessionDoc>('sessions', order, query.page);
    if (query.statuses && query.statuses.length === 0) return { data: [], next_page: null };
    const and: Filter<SessionDoc>[] = [{ owner_id: ownerId, deleted: false }, ...page.filter];
    if (!query.include_archived) and.push({ archived: false });
    if (query.agent_id !== undefined) and.push({ agent_id: query.agent_id });
    if (query.agent_version !== undefined) and.push({ agent_version: query.agent_version });
    if (query.statuses) and.push({ status: { $in: [...query.statuses] } });
    const range = isoRange(query.created_at);
    if (Object.keys(range).length > 0) and.push({ created_at: Object.fromEntries(Object.entries(range).map(([op, v]) => [`$${op}`, v])) });
    const docs = await this.m.c.sessions.find({ $and: and }, { projection: { record: 1 } }).sort(page.sort).limit(limit + 1).toArray();
    return pageOf('sessions', order, limit, docs.map((d) => recordOf(d) as SessionRecord), (s) => [s.created_at, s.id]);
  }
}
