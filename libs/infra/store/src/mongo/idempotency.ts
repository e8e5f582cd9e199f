import type { IdempotencyKeys, IdempotencyRecord } from '@berth/ports';
import type { Collections, IdempotencyDoc } from './collections';
import { isDuplicateKey } from './errors';

const recordOf = ({ owner_id, key, subject, session_id, created_at }: IdempotencyDoc): IdempotencyRecord => ({ owner_id, key, subject, session_id, created_at });

export class MongoIdempotencyKeys implements IdempotencyKeys {
  constructor(private readonly c: Collections) {}

  async claim(record: IdempotencyRecord): Promise<IdempotencyRecord> {
    try {
      await this.c.idempotency.insertOne({ _id: `${record.owner_id}:${record.key}`, ...record });
      return record;
    } catch (e) {
      if (!isDuplicateKey(e)) throw e;
    }
    const existing = await this.get(record.owner_id, record.key);
    if (!existing) throw new Error(`idempotency key ${record.key} vanished after a duplicate-key insert`);
    return existing;
  }

  async get(ownerId: string, key: string): Promise<IdempotencyRecord | null> {
    const doc = await this.c.idempotency.findOne({ _id: `${ownerId}:${key}` });
    return doc ? recordOf(doc) : null;
  }
}
