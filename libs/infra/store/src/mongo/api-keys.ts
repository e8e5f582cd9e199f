import { ConcurrencyError } from '@berth/core';
import type { ApiKeyRecord, ApiKeys } from '@berth/ports';
import type { ApiKeyDoc, Collections } from './collections';
import { isDuplicateKey } from './errors';

const recordOf = ({ _id, owner_id, prefix, hash, name, created_at, revoked_at }: ApiKeyDoc): ApiKeyRecord => ({ id: _id, owner_id, prefix, hash, name, created_at, revoked_at });

export class MongoApiKeys implements ApiKeys {
  constructor(private readonly c: Collections) {}

  async insert(key: ApiKeyRecord): Promise<void> {
    const { id, ...rest } = key;
    try {
      await this.c.apiKeys.insertOne({ _id: id, ...rest });
    } catch (e) {
      if (isDuplicateKey(e)) throw new ConcurrencyError(`api key ${key.id} or prefix ${key.prefix} already exists`);
      throw e;
    }
  }

  async byPrefix(prefix: string): Promise<ApiKeyRecord | null> {
    const doc = await this.c.apiKeys.findOne({ prefix });
    return doc ? recordOf(doc) : null;
  }

  async list(ownerId: string): Promise<readonly ApiKeyRecord[]> {
    return (await this.c.apiKeys.find({ owner_id: ownerId }).sort({ created_at: 1, _id: 1 }).toArray()).map(recordOf);
  }

  /** True when the owner has this key; revoking again keeps the first revocation time. */
  async revoke(ownerId: string, id: string, at: string): Promise<boolean> {
    const revoked = await this.c.apiKeys.updateOne({ _id: id, owner_id: ownerId, revoked_at: null }, { $set: { revoked_at: at } });
    return revoked.matchedCount === 1 || (await this.c.apiKeys.countDocuments({ _id: id, owner_id: ownerId }, { limit: 1 })) === 1;
  }
}
