import { ConcurrencyError } from '@berth/core';
import type { EnvironmentRecord, EnvironmentStore, Page, PageQuery, WebhookOutbox } from '@berth/ports';
import type { Filter } from 'mongodb';
import { checkLimit, orderOf, pageOf } from '../shared/paging';
import { recordJson } from '../shared/limits';
import type { EnvironmentDoc } from './collections';
import { PRIMARY, type MongoContext } from './context';
import { isDuplicateOn } from './errors';
import { keysetPage } from './keyset';
import { writeWithWebhooks } from './webhooks';

const recordOf = (doc: { record: string } | null): EnvironmentRecord | null => (doc ? (JSON.parse(doc.record) as EnvironmentRecord) : null);
const fieldsOf = (env: EnvironmentRecord) => ({ created_at: env.created_at, archived: env.archived_at !== null, deleted: env.deleted, record: recordJson(`environment ${env.id}`, env) });

export class MongoEnvironments implements EnvironmentStore {
  constructor(private readonly m: MongoContext) {}

  async insert(env: EnvironmentRecord, webhooks: WebhookOutbox = []): Promise<void> {
    const doc = { _id: env.id, owner_id: env.owner_id, ...fieldsOf(env) };
    try {
      await writeWithWebhooks(this.m, webhooks, async (session) => {
        await this.m.c.environments.insertOne(doc, { session });
        return true;
      });
    } catch (e) {
      if (isDuplicateOn(e, '_id_')) throw new ConcurrencyError(`environment ${env.id} already exists`);
      throw e;
    }
  }

  async put(env: EnvironmentRecord, webhooks: WebhookOutbox = []): Promise<void> {
    const fields = fieldsOf(env);
    try {
      await writeWithWebhooks(this.m, webhooks, async (session) => {
        await this.m.c.environments.updateOne({ _id: env.id, owner_id: env.owner_id }, { $set: fields }, { upsert: true, session });
        return true;
      });
    } catch (e) {
      // The id belongs to another owner: never overwrite it (same as SQLite's guarded upsert); the transaction wrote nothing.
      if (!isDuplicateOn(e, '_id_')) throw e;
    }
  }

  async get(ownerId: string, id: string): Promise<EnvironmentRecord | null> {
    return recordOf(await this.m.c.environments.findOne({ _id: id, owner_id: ownerId }, { ...PRIMARY, projection: { record: 1 } }));
  }

  async list(ownerId: string, query: PageQuery & { include_archived?: boolean }): Promise<Page<EnvironmentRecord>> {
    const limit = checkLimit(query.limit);
    const order = orderOf(query.order);
    const page = keysetPage<EnvironmentDoc>('environments', order, query.page);
    const and: Filter<EnvironmentDoc>[] = [{ owner_id: ownerId, deleted: false }, ...page.filter];
    if (!query.include_archived) and.push({ archived: false });
    const docs = await this.m.c.environments.find({ $and: and }, { projection: { record: 1 } }).sort(page.sort).limit(limit + 1).toArray();
    return pageOf('environments', order, limit, docs.map((d) => recordOf(d) as EnvironmentRecord), (e) => [e.created_at, e.id]);
  }
}
