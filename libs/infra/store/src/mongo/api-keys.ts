import { ConcurrencyError } from '@berth/core';
import type { ApiKeyRecord, ApiKeys } from '@berth/ports';
import { UNIQUE_KEYS, Unique, type ApiKeyDoc } from './collections';
import { PRIMARY, type MongoContext } from './context';
import { isDuplicateOn } from './errors';

const recordOf = ({ _id, owner_id, prefix, hash, name, created_at, revoked_at }: ApiKeyDoc): ApiKeyRecord => ({ id: _id, owner_id, prefix, hash, name, created_at, revoked_at });

export class MongoApiKeys implements ApiKeys {
  constructor(private readonly m: MongoContext) {}

  async insert(key: ApiKeyRecord): Promise<void> {
    const { id, ...rest } = key;
    try {
      await this.m.c.apiKeys.insertOne({ _id: id, ...rest });
    } catch (e) {
      if (isDuplicateOn(e, '_id_')) throw new ConcurrencyError(`api key ${key.id} already exists`);
      if (isDuplicateOn(e, Unique.apiKeyPrefix.name, UNIQUE_KEYS)) throw new ConcurrencyError(`api key prefix ${key.prefix} already exists`);
      throw e;
    }
  }

  async byPrefix(prefix: string): Promise<ApiKeyRecord | null> {
    const doc = await this.m.c.apiKeys.findOne({ prefix }, PRIMARY);
    return doc ? recordOf(doc) : null;
  }

  async list(ownerId: string): Promise<readonly ApiKeyRecord[]> {
    return (await this.m.c.apiKeys.find({ owner_id: ownerId }).sort({ created_at: 1, _id: 1 }).toArray()).map(recordOf);
  }

  /** True when the owner has this key; revoking again keeps the first revocation time. */
  async revoke(ownerId: string, id: string, at: string): Promise<boolean> {
    const revoked = await this.m.c.apiKeys.updateOne({ _id: id, owner_id: ownerId, revoked_at: null }, { $set: { revoked_at: at } });
    return revoked.matchedCount === 1 || (await this.m.c.apiKeys.countDocuments({ _id: id, owner_id: ownerId }, { ...PRIMARY, limit: 1 })) === 1;
  }
}
