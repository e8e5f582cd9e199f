import { credentialVersion, type CredentialRecord, type VaultRecord } from '@berth/contracts';
import { ConcurrencyError } from '@berth/core';
import type { Page, VaultListQuery, VaultStore, WebhookOutbox } from '@berth/ports';
import type { Filter } from 'mongodb';
import { checkLimit, orderOf, pageOf } from '../shared/paging';
import type { Collections, VaultCredentialDoc, VaultDoc } from './collections';
import type { MongoContext } from './context';
import { isDuplicateOn } from './errors';
import { keysetPage } from './keyset';
import { writeWithWebhooks } from './webhooks';

const parse = <T>(doc: { record: string } | null): T | null => (doc ? (JSON.parse(doc.record) as T) : null);

/** The queryable fields of a credential's document, besides its keys. */
const credentialFields = (credential: CredentialRecord) => ({
  created_at: credential.created_at,
  archived: credential.archived_at !== null,
  version: credentialVersion(credential),
  refresh_due_at: credential.refresh?.state.next_attempt_at ?? null,
  record: JSON.stringify(credential),
});

export class MongoVaults implements VaultStore {
  private readonly c: Collections;

  constructor(private readonly m: MongoContext) {
    this.c = m.c;
  }

  async put(vault: VaultRecord, webhooks: WebhookOutbox = []): Promise<void> {
    const fields = { created_at: vault.created_at, archived: vault.archived_at !== null, record: JSON.stringify(vault) };
    try {
      await writeWithWebhooks(this.m, webhooks, async (session) => {
        await this.c.vaults.updateOne({ _id: vault.id, owner_id: vault.owner_id }, { $set: fields }, { upsert: true, session });
        return true;
      });
    } catch (e) {
      // The id belongs to another owner: never overwrite it.
      if (!isDuplicateOn(e, '_id_')) throw e;
    }
  }

  async get(ownerId: string, id: string): Promise<VaultRecord | null> {
    return parse(await this.c.vaults.findOne({ _id: id, owner_id: ownerId }));
  }

  async list(ownerId: string, query: VaultListQuery): Promise<Page<VaultRecord>> {
    const limit = checkLimit(query.limit);
    const order = orderOf(query.order);
    const page = keysetPage<VaultDoc>('vaults', order, query.page);
    const and: Filter<VaultDoc>[] = [{ owner_id: ownerId }, ...page.filter];
    if (!query.include_archived) and.push({ archived: false });
    const docs = await this.c.vaults.find({ $and: and }).sort(page.sort).limit(limit + 1).toArray();
    return pageOf('vaults', order, limit, docs.map((d) => parse<VaultRecord>(d) as VaultRecord), (v) => [v.created_at, v.id]);
  }

  async delete(ownerId: string, id: string, webhooks: WebhookOutbox = []): Promise<boolean> {
    return writeWithWebhooks(this.m, webhooks, async (session) => {
      const removed = (await this.c.vaults.deleteOne({ _id: id, owner_id: ownerId }, { session })).deletedCount === 1;
      if (removed) await this.c.vaultCredentials.deleteMany({ vault_id: id, owner_id: ownerId }, { session });
      return removed;
    });
  }

  async putCredential(credential: CredentialRecord, webhooks: WebhookOutbox = []): Promise<void> {
    const fields = credentialFields(credential);
    try {
      await writeWithWebhooks(this.m, webhooks, async (session) => {
        await this.c.vaultCredentials.updateOne({ _id: credential.id, owner_id: credential.owner_id, vault_id: credential.vault_id }, { $set: fields }, { upsert: true, session });
        return true;
      });
    } catch (e) {
      if (!isDuplicateOn(e, '_id_')) throw e;
    }
  }

  async updateCredential(credential: CredentialRecord, expectedVersion: number, webhooks: WebhookOutbox = []): Promise<void> {
    // A document from before versions has none: it is at version 0.
    const atVersion: Filter<VaultCredentialDoc> = expectedVersion === 0 ? { $or: [{ version: 0 }, { version: { $exists: false } }] } : { version: expectedVersion };
    const updated = await writeWithWebhooks(this.m, webhooks, async (session) => {
      const result = await this.c.vaultCredentials.updateOne({ _id: credential.id, owner_id: credential.owner_id, vault_id: credential.vault_id, ...atVersion }, { $set: credentialFields(credential) }, { session });
      return result.matchedCount === 1;
    });
    if (!updated) throw new ConcurrencyError(`credential ${credential.id} is not at version ${expectedVersion} (changed meanwhile, or gone)`);
  }

  async getCredential(ownerId: string, vaultId: string, id: string): Promise<CredentialRecord | null> {
    return parse(await this.c.vaultCredentials.findOne({ _id: id, vault_id: vaultId, owner_id: ownerId }));
  }

  async listCredentials(ownerId: string, vaultId: string, query: VaultListQuery): Promise<Page<CredentialRecord>> {
    const limit = checkLimit(query.limit);
    const order = orderOf(query.order);
    const list = `vault_credentials:${vaultId}`;
    const page = keysetPage<VaultCredentialDoc>(list, order, query.page);
    const and: Filter<VaultCredentialDoc>[] = [{ vault_id: vaultId, owner_id: ownerId }, ...page.filter];
    if (!query.include_archived) and.push({ archived: false });
    const docs = await this.c.vaultCredentials.find({ $and: and }).sort(page.sort).limit(limit + 1).toArray();
    return pageOf(list, order, limit, docs.map((d) => parse<CredentialRecord>(d) as CredentialRecord), (c) => [c.created_at, c.id]);
  }

  async countCredentials(ownerId: string, vaultId: string): Promise<number> {
    return this.c.vaultCredentials.countDocuments({ vault_id: vaultId, owner_id: ownerId });
  }

  async deleteCredential(ownerId: string, vaultId: string, id: string, webhooks: WebhookOutbox = []): Promise<boolean> {
    return writeWithWebhooks(this.m, webhooks, async (session) => (await this.c.vaultCredentials.deleteOne({ _id: id, vault_id: vaultId, owner_id: ownerId }, { session })).deletedCount === 1);
  }

  async activeCredentials(ownerId: string, vaultIds: readonly string[]): Promise<readonly CredentialRecord[]> {
    const live = new Set((await this.c.vaults.find({ _id: { $in: [...vaultIds] }, owner_id: ownerId, archived: false }).project({ _id: 1 }).toArray()).map((v) => v._id as string));
    const docs = await this.c.vaultCredentials.find({ vault_id: { $in: [...live] }, owner_id: ownerId, archived: false }).sort({ created_at: 1, _id: 1 }).toArray();
    const credentials = docs.map((d) => parse<CredentialRecord>(d) as CredentialRecord);
    return vaultIds.flatMap((id) => credentials.filter((c) => c.vault_id === id));
  }

  async refreshDue(now: string, limit: number): Promise<readonly CredentialRecord[]> {
    const docs = await this.c.vaultCredentials
      .aggregate<VaultCredentialDoc>([
        { $match: { archived: false, refresh_due_at: { $type: 'string', $lte: now } } },
        { $sort: { refresh_due_at: 1, _id: 1 } },
        // Credentials of archived vaults are not used, so not refreshed (their vault is read-only for good).
        { $lookup: { from: this.c.vaults.collectionName, localField: 'vault_id', foreignField: '_id', as: 'vault' } },
        { $match: { 'vault.archived': false } },
        { $limit: checkLimit(limit) },
        { $project: { vault: 0 } },
      ])
      .toArray();
    return docs.map((d) => parse<CredentialRecord>(d) as CredentialRecord);
  }
}
