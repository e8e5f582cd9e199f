import type { Lease, Leases, SandboxClaims } from '@berth/ports';
import type { Collections, LeaseDoc } from './collections';
import { PRIMARY } from './context';
import { isDuplicateOn } from './errors';

export class MongoSandboxClaims implements SandboxClaims {
  constructor(private readonly c: Collections) {}

  async claim(sandboxId: string, claimant: string, at: string): Promise<boolean> {
    try {
      await this.c.sandboxClaims.insertOne({ _id: sandboxId, claimant, claimed_at: at });
      return true;
    } catch (e) {
      if (!isDuplicateOn(e, '_id_')) throw e;
    }
    return (await this.claimant(sandboxId)) === claimant;
  }

  async claimant(sandboxId: string): Promise<string | null> {
    return (await this.c.sandboxClaims.findOne({ _id: sandboxId }, PRIMARY))?.claimant ?? null;
  }

  async release(sandboxId: string): Promise<void> {
    await this.c.sandboxClaims.deleteOne({ _id: sandboxId });
  }
}

/**
 * One conditional upsert per acquire: the filter matches only a lease `holder` may take (free,
 * expired, or its own), so a lease another holder keeps matches nothing and the upsert's insert of
 * the same `_id` fails as a duplicate: that is the lost race.
 */
export class MongoLeases implements Leases {
  constructor(private readonly c: Collections) {}

  async acquire(name: string, holder: string, now: Date, ttlMs: number): Promise<Lease | null> {
    const at = now.getTime();
    const renewal = { $and: [{ $eq: ['$holder', { $literal: holder }] }, { $gt: ['$expires_at', at] }] };
    try {
      const doc = await this.c.leases.findOneAndUpdate(
        { _id: name, $or: [{ holder }, { holder: null }, { expires_at: { $lte: at } }] },
        [{ $set: { epoch: { $cond: [renewal, '$epoch', { $add: [{ $ifNull: ['$epoch', 0] }, 1] }] }, holder: { $literal: holder }, expires_at: at + ttlMs } }],
        { upsert: true, returnDocument: 'after', ...PRIMARY },
      );
      return doc ? leaseOf(doc) : null;
    } catch (e) {
      if (isDuplicateOn(e, '_id_')) return null;
      throw e;
    }
  }

  async get(name: string): Promise<Lease | null> {
    const doc = await this.c.leases.findOne({ _id: name }, PRIMARY);
    return doc === null || doc.holder === null ? null : leaseOf(doc);
  }

  async release(name: string, holder: string): Promise<void> {
    await this.c.leases.updateOne({ _id: name, holder }, { $set: { holder: null } });
  }
}

const leaseOf = (doc: LeaseDoc): Lease => ({ name: doc._id, holder: doc.holder ?? '', epoch: doc.epoch, expires_at: new Date(doc.expires_at).toISOString() });
