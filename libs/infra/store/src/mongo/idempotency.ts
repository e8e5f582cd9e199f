import type { IdempotencyKeys, IdempotencyRecord } from '@berth/ports';
import type { IdempotencyDoc } from './collections';
import { PRIMARY, type MongoContext } from './context';
import { isDuplicateOn } from './errors';

const recordOf = ({ owner_id, key, subject, session_id, created_at }: IdempotencyDoc): IdempotencyRecord => ({ owner_id, key, subject, session_id, created_at });

export class MongoIdempotencyKeys implements IdempotencyKeys {
  constructor(private readonly m: MongoContext) {}

  async claim(record: IdempotencyRecord): Promise<IdempotencyRecord> {
    try {
      await this.m.c.idempotency.insertOne({ _id: `${record.owner_id}:${record.key}`, ...record });
      return record;
    } catch (e) {
      if (!isDuplicateOn(e, '_id_')) throw e;
    }
    const existing = await this.get(record.owner_id, record.key);
    if (!existing) throw new Error(`idempotency key ${record.key} vanished after a duplicate-key insert`);
    return existing;
  }

  async get(ownerId: string, key: string): Promise<IdempotencyRecord | null> {
    const doc = await this.m.c.idempotency.findOne({ _id: `${ownerId}:${key}` }, PRIMARY);
    return doc ? recordOf(doc) : null;
  }
}
