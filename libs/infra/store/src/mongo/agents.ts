import { ConcurrencyError } from '@berth/core';
import type { AgentRecord, AgentStore, Page, PageQuery } from '@berth/ports';
import type { Filter } from 'mongodb';
import { checkVersionStep } from '../shared/checks';
import { checkLimit, decodeCursor, orderOf, pageOf } from '../shared/paging';
import type { AgentDoc, Collections } from './collections';
import { isDuplicateKey } from './errors';
import { keysetPage } from './keyset';

/** Archival and the latest update are agent-wide; every version reports them. */
function recordOf(doc: Pick<AgentDoc, 'latest_version' | 'updated_at' | 'archived_at'>, version: number, json: string): AgentRecord {
  const record = JSON.parse(json) as AgentRecord;
  return { ...record, archived_at: doc.archived_at, updated_at: version === doc.latest_version ? doc.updated_at : record.updated_at };
}

/**
 * One document per agent holding every version: adding a version is a single-document
 * compare-and-set on `latest_version`, atomic without transactions. Agent configs are small and
 * versions few, far from the 16 MB document limit.
 */
export class MongoAgents implements AgentStore {
  constructor(private readonly c: Collections) {}

  async putVersion(agent: AgentRecord, expectedVersion: number): Promise<void> {
    checkVersionStep(agent, expectedVersion);
    const json = JSON.stringify(agent);
    if (expectedVersion === 0) {
      try {
        await this.c.agents.insertOne({
          _id: agent.id,
          owner_id: agent.owner_id,
          latest_version: agent.version,
          created_at: agent.created_at,
          updated_at: agent.updated_at,
          archived_at: agent.archived_at,
          latest: json,
          versions: [{ version: agent.version, record: json }],
        });
        return;
      } catch (e) {
        if (isDuplicateKey(e)) throw this.conflict(agent.id, expectedVersion);
        throw e;
      }
    }
    const moved = await this.c.agents.updateOne(
      { _id: agent.id, owner_id: agent.owner_id, latest_version: expectedVersion },
      { $set: { latest_version: agent.version, updated_at: agent.updated_at, latest: json }, $push: { versions: { version: agent.version, record: json } } },
    );
    if (moved.matchedCount !== 1) throw this.conflict(agent.id, expectedVersion);
  }

  async get(ownerId: string, id: string, version?: number): Promise<AgentRecord | null> {
    const doc = await this.c.agents.findOne({ _id: id, owner_id: ownerId });
    if (!doc) return null;
    if (version === undefined) return recordOf(doc, doc.latest_version, doc.latest);
    const found = doc.versions.find((v) => v.version === version);
    return found ? recordOf(doc, found.version, found.record) : null;
  }

  async list(ownerId: string, query: PageQuery & { include_archived?: boolean }): Promise<Page<AgentRecord>> {
    const limit = checkLimit(query.limit);
    const order = orderOf(query.order);
    const page = keysetPage<AgentDoc>('agents', order, query.page);
    const and: Filter<AgentDoc>[] = [{ owner_id: ownerId }, ...page.filter];
    if (!query.include_archived) and.push({ archived_at: null });
    const docs = await this.c.agents.find({ $and: and }, { projection: { versions: 0 } }).sort(page.sort).limit(limit + 1).toArray();
    return pageOf('agents', order, limit, docs.map((d) => recordOf(d, d.latest_version, d.latest)), (a) => [a.created_at, a.id]);
  }

  async listVersions(ownerId: string, id: string, query: PageQuery): Promise<Page<AgentRecord>> {
    const limit = checkLimit(query.limit);
    const order = orderOf(query.order);
    const list = `agent_versions:${id}`;
    const after = decodeCursor(list, order, query.page);
    const doc = await this.c.agents.findOne({ _id: id, owner_id: ownerId });
    if (!doc) return { data: [], next_page: null };
    const versions = [...doc.versions]
      .sort((a, b) => (order === 'asc' ? a.version - b.version : b.version - a.version))
      .filter((v) => after === null || (order === 'asc' ? v.version > Number(after[0]) : v.version < Number(after[0])))
      .slice(0, limit + 1);
    return pageOf(list, order, limit, versions.map((v) => recordOf(doc, v.version, v.record)), (a) => [a.version]);
  }

  async archive(ownerId: string, id: string, at: string): Promise<AgentRecord | null> {
    await this.c.agents.updateOne({ _id: id, owner_id: ownerId, archived_at: null }, { $set: { archived_at: at, updated_at: at } });
    return this.get(ownerId, id);
  }

  private conflict(id: string, expectedVersion: number): ConcurrencyError {
    return new ConcurrencyError(`agent ${id} is no longer at version ${expectedVersion}`);
  }
}
