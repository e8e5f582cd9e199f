import { ConcurrencyError } from '@berth/core';
import type { NatsCredentialRecord, NatsCredentials } from '@berth/ports';
import type { Collections, NatsCredentialDoc } from './collections';
import { isDuplicateOn } from './errors';

const PUBLIC_KEY = { public_key: { public_key: 1 } };

const recordOf = ({ _id, ...rest }: NatsCredentialDoc): NatsCredentialRecord => ({ id: _id, ...rest });

export class MongoNatsCredentials implements NatsCredentials {
  constructor(private readonly c: Collections) {}

  async insert(credential: NatsCredentialRecord): Promise<void> {
    const { id, ...rest } = credential;
    try {
      await this.c.natsCredentials.insertOne({ _id: id, ...rest });
    } catch (e) {
      if (isDuplicateOn(e, '_id_') || isDuplicateOn(e, 'public_key', PUBLIC_KEY)) throw new ConcurrencyError(`nats credential ${id} or key ${credential.public_key} already exists`);
      throw e;
    }
  }

  async list(ownerId: string): Promise<readonly NatsCredentialRecord[]> {
    return (await this.c.natsCredentials.find({ owner_id: ownerId }).sort({ created_at: 1, _id: 1 }).toArray()).map(recordOf);
  }

  async revoke(ownerId: string, id: string, at: string): Promise<NatsCredentialRecord | null> {
    await this.c.natsCredentials.updateOne({ _id: id, owner_id: ownerId, revoked_at: null }, { $set: { revoked_at: at } });
    const doc = await this.c.natsCredentials.findOne({ _id: id, owner_id: ownerId });
    return doc ? recordOf(doc) : null;
  }

  async revoked(): Promise<readonly NatsCredentialRecord[]> {
    return (await this.c.natsCredentials.find({ revoked_at: { $type: 'string' } }).sort({ revoked_at: 1, _id: 1 }).toArray()).map(recordOf);
  }
}
