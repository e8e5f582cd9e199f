import { ConcurrencyError } from '@berth/core';
import type { FileListQuery, FileRecord, FileStore, Page } from '@berth/ports';
import type { Filter } from 'mongodb';
import { checkIds } from '../shared/checks';
import { checkLimit, orderOf, pageOf } from '../shared/paging';
import type { Collections, FileDoc } from './collections';
import { isDuplicateOn } from './errors';
import { keysetPage } from './keyset';

/** The `deleted` field is the truth (markDeleted flips only it). */
const recordOf = (doc: { record: string; deleted: boolean } | null): FileRecord | null => (doc ? { ...(JSON.parse(doc.record) as FileRecord), deleted: doc.deleted } : null);
const fieldsOf = (file: FileRecord) => ({ scope_id: file.scope?.id ?? null, created_at: file.created_at, deleted: file.deleted, record: JSON.stringify(file) });

export class MongoFiles implements FileStore {
  constructor(private readonly c: Collections) {}

  async insert(file: FileRecord): Promise<void> {
    try {
      await this.c.files.insertOne({ _id: file.id, owner_id: file.owner_id, ...fieldsOf(file) });
    } catch (e) {
      if (isDuplicateOn(e, '_id_')) throw new ConcurrencyError(`file ${file.id} already exists`);
      throw e;
    }
  }

  async put(file: FileRecord): Promise<void> {
    try {
      await this.c.files.updateOne({ _id: file.id, owner_id: file.owner_id }, { $set: fieldsOf(file) }, { upsert: true });
    } catch (e) {
      // The id belongs to another owner: never overwrite it.
      if (!isDuplicateOn(e, '_id_')) throw e;
    }
  }

  async get(ownerId: string, id: string): Promise<FileRecord | null> {
    return recordOf(await this.c.files.findOne({ _id: id, owner_id: ownerId }, { projection: { record: 1, deleted: 1 } }));
  }

  async list(ownerId: string, query: FileListQuery): Promise<Page<FileRecord>> {
    const limit = checkLimit(query.limit);
    const order = orderOf(query.order);
    const page = keysetPage<FileDoc>('files', order, query.page);
    const and: Filter<FileDoc>[] = [{ owner_id: ownerId, deleted: false }, ...page.filter];
    if (query.scope_id !== undefined) and.push({ scope_id: query.scope_id });
    if (query.ids !== undefined) and.push({ _id: { $in: checkIds(query.ids) } });
    const docs = await this.c.files.find({ $and: and }, { projection: { record: 1, deleted: 1 } }).sort(page.sort).limit(limit + 1).toArray();
    return pageOf('files', order, limit, docs.map((d) => recordOf(d) as FileRecord), (f) => [f.created_at, f.id]);
  }

  async markDeleted(ownerId: string, id: string): Promise<FileRecord | null> {
    // One compare-and-set: only the caller that flips `deleted` gets the record back.
    return recordOf(await this.c.files.findOneAndUpdate({ _id: id, owner_id: ownerId, deleted: false }, { $set: { deleted: true } }, { returnDocument: 'before' }));
  }
}
