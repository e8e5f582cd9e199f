import { ConcurrencyError } from '@berth/core';
import type { AgentRecord, AgentStore, Page, PageQuery, WebhookOutbox } from '@berth/ports';
import { ObjectId, type Filter } from 'mongodb';
import { checkVersionStep } from '../shared/checks';
import { recordJson } from '../shared/limits';
import { checkLimit, decodeCursor, orderOf, pageOf } from '../shared/paging';
import { UNIQUE_KEYS, Unique, type AgentDoc, type AgentVersionDoc } from './collections';
import { PRIMARY, type MongoContext } from './context';
import { isDuplicateOn } from './errors';
import { keysetPage } from './keyset';
import { insertDeliveries, writeWithWebhooks } from './webhooks';

/** Archival and the latest update are agent-wide; every version reports them. */
function recordOf(head: Pick<AgentDoc, 'latest_version' | 'updated_at' | 'archived_at'>, version: number, json: string): AgentRecord {
  const record = JSON.parse(json) as AgentRecord;
  return { ...record, archived_at: head.archived_at, updated_at: version === head.latest_version ? head.updated_at : record.updated_at };
}

/**
 * An agent is a head document (agent-wide fields and its latest record, so lists read one
 * document each) plus one document per version, unique on (agent_id, version): any number of
 * versions fits, each at most StoreLimits.recordBytes. A new version moves the head from the
 * expected version and inserts the version document (and the change's webhook deliveries) in one
 * transaction.
 */
export class MongoAgents implements AgentStore {
  constructor(private readonly m: MongoContext) {}

  async putVersion(agent: AgentRecord, expectedVersion: number, webhooks: WebhookOutbox = []): Promise<void> {
    checkVersionStep(agent, expectedVersion);
    const json = recordJson(`agent ${agent.id} version ${agent.version}`, agent);
    const { c } = this.m;
    const conflict = () => new ConcurrencyError(`agent ${agent.id} is no longer at version ${expectedVersion}`);
    await this.m.transaction(async (session) => {
      try {
        if (expectedVersion === 0) {
          await c.agents.insertOne(
            { _id: agent.id, owner_id: agent.owner_id, latest_version: agent.version, created_at: agent.created_at, updated_at: agent.updated_at, archived_at: agent.archived_at, latest: json },
            { session },
          );
        } else {
          const moved = await c.agents.updateOne(
            { _id: agent.id, owner_id: agent.owner_id, latest_version: expectedVersion },
            { $set: { latest_version: agent.version, updated_at: agent.updated_at, latest: json } },
            { session },
          );
          if (moved.matchedCount !== 1) throw conflict();
        }
        await c.agentVersions.insertOne({ _id: new ObjectId(), agent_id: agent.id, owner_id: agent.owner_id, version: agent.version, record: json }, { session });
        await insertDeliveries(c, webhooks, session);
      } catch (e) {
        // The agent id is taken (by this owner or another), or another writer added this version.
        if (isDuplicateOn(e, '_id_') || isDuplicateOn(e, Unique.agentVersion.name, UNIQUE_KEYS)) throw conflict();
        throw e;
      }
    });
  }

  async get(ownerId: string, id: string, version?: number): Promise<AgentRecord | null> {
    const head = await this.m.c.agents.findOne({ _id: id, owner_id: ownerId }, PRIMARY);
    if (!head) return null;
    if (version === undefined || version === head.latest_version) return recordOf(head, head.latest_version, head.latest);
    const found = await this.m.c.agentVersions.findOne({ agent_id: id, version }, { ...PRIMARY, projection: { record: 1 } });
    return found ? recordOf(head, version, found.record) : null;
  }

  async list(ownerId: string, query: PageQuery & { include_archived?: boolean }): Promise<Page<AgentRecord>> {
    const limit = checkLimit(query.limit);
    const order = orderOf(query.order);
    const page = keysetPage<AgentDoc>('agents', order, query.page);
    const and: Filter<AgentDoc>[] = [{ owner_id: ownerId }, ...page.filter];
    if (!query.include_archived) and.push({ archived_at: null });
    const docs = await this.m.c.agents.find({ $and: and }).sort(page.sort).limit(limit + 1).toArray();
    return pageOf('agents', order, limit, docs.map((d) => recordOf(d, d.latest_version, d.latest)), (a) => [a.created_at, a.id]);
  }

  async listVersions(ownerId: string, id: string, query: PageQuery): Promise<Page<AgentRecord>> {
    const limit = checkLimit(query.limit);
    const order = orderOf(query.order);
    const list = `agent_versions:${id}`;
    const after = decodeCursor(list, order, query.page);
    const head = await this.m.c.agents.findOne({ _id: id, owner_id: ownerId });
    if (!head) return { data: [], next_page: null };
    const filter: Filter<AgentVersionDoc> = { agent_id: id };
    if (after !== null) filter.version = order === 'asc' ? { $gt: Number(after[0]) } : { $lt: Number(after[0]) };
    const docs = await this.m.c.agentVersions
      .find(filter, { projection: { version: 1, record: 1 } })
      .sort({ version: order === 'asc' ? 1 : -1 })
      .limit(limit + 1)
      .toArray();
    return pageOf(list, order, limit, docs.map((d) => recordOf(head, d.version, d.record)), (a) => [a.version]);
  }

  async archive(ownerId: string, id: string, at: string, webhooks: WebhookOutbox = []): Promise<AgentRecord | null> {
    await writeWithWebhooks(this.m, webhooks, async (session) => (await this.m.c.agents.updateOne({ _id: id, owner_id: ownerId, archived_at: null }, { $set: { archived_at: at, updated_at: at } }, { session })).modifiedCount === 1);
    return this.get(ownerId, id);
  }
}
