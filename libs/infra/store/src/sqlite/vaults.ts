import type { CredentialRecord, VaultRecord } from '@berth/contracts';
import { ConcurrencyError } from '@berth/core';
import type { Page, VaultListQuery, VaultStore, WebhookOutbox } from '@berth/ports';
import { checkLimit, orderOf, pageOf } from '../shared/paging';
import { keysetPage } from './keyset';
import type { SqliteDb } from './sqlite-db';
import { insertDeliveries } from './webhooks';

const parse = <T>(row: unknown): T | null => (row ? (JSON.parse((row as { record: string }).record) as T) : null);

export class SqliteVaults implements VaultStore {
  constructor(private readonly db: SqliteDb) {}

  async put(vault: VaultRecord, webhooks: WebhookOutbox = []): Promise<void> {
    this.db.write(() => {
      const written = this.db
        .stmt(
          `INSERT INTO vaults (id, owner_id, created_at, archived, record) VALUES (?, ?, ?, ?, ?)
           ON CONFLICT (id) DO UPDATE SET archived = excluded.archived, record = excluded.record WHERE vaults.owner_id = excluded.owner_id`,
        )
        .run(vault.id, vault.owner_id, vault.created_at, vault.archived_at === null ? 0 : 1, JSON.stringify(vault)).changes === 1;
      if (written) insertDeliveries(this.db, webhooks);
    });
  }

  async get(ownerId: string, id: string): Promise<VaultRecord | null> {
    return parse(this.db.stmt('SELECT record FROM vaults WHERE id = ? AND owner_id = ?').get(id, ownerId));
  }

  async list(ownerId: string, query: VaultListQuery): Promise<Page<VaultRecord>> {
    const limit = checkLimit(query.limit);
    const order = orderOf(query.order);
    const page = keysetPage('vaults', order, query.page);
    const where = ['owner_id = ?', ...(query.include_archived ? [] : ['archived = 0']), ...page.where].join(' AND ');
    const rows = this.db.stmt(`SELECT record FROM vaults WHERE ${where} ${page.orderBy} LIMIT ?`).all(ownerId, ...page.params, limit + 1);
    return pageOf('vaults', order, limit, rows.map((r) => parse<VaultRecord>(r) as VaultRecord), (v) => [v.created_at, v.id]);
  }

  async delete(ownerId: string, id: string, webhooks: WebhookOutbox = []): Promise<boolean> {
    return this.db.write(() => {
      const removed = this.db.stmt('DELETE FROM vaults WHERE id = ? AND owner_id = ?').run(id, ownerId).changes === 1;
      if (removed) {
        this.db.stmt('DELETE FROM vault_credentials WHERE vault_id = ? AND owner_id = ?').run(id, ownerId);
        insertDeliveries(this.db, webhooks);
      }
      return removed;
    });
  }

  async putCredential(credential: CredentialRecord, webhooks: WebhookOutbox = []): Promise<void> {
    this.db.write(() => {
      const written = this.db
        .stmt(
          `INSERT INTO vault_credentials (id, owner_id, vault_id, created_at, archived, record) VALUES (?, ?, ?, ?, ?, ?)
           ON CONFLICT (id) DO UPDATE SET archived = excluded.archived, record = excluded.record
           WHERE vault_credentials.owner_id = excluded.owner_id AND vault_credentials.vault_id = excluded.vault_id`,
        )
        .run(credential.id, credential.owner_id, credential.vault_id, credential.created_at, credential.archived_at === null ? 0 : 1, JSON.stringify(credential)).changes === 1;
      if (written) insertDeliveries(this.db, webhooks);
    });
  }

  async updateCredential(credential: CredentialRecord, expectedVersion: number, webhooks: WebhookOutbox = []): Promise<void> {
    this.db.write(() => {
      const updated = this.db
        .stmt(
          `UPDATE vault_credentials SET archived = ?, record = ?
           WHERE id = ? AND owner_id = ? AND vault_id = ? AND COALESCE(json_extract(record, '$.version'), 0) = ?`,
        )
        .run(credential.archived_at === null ? 0 : 1, JSON.stringify(credential), credential.id, credential.owner_id, credential.vault_id, expectedVersion).changes === 1;
      if (!updated) throw new ConcurrencyError(`credential ${credential.id} is not at version ${expectedVersion} (changed meanwhile, or gone)`);
      insertDeliveries(this.db, webhooks);
    });
  }

  async getCredential(ownerId: string, vaultId: string, id: string): Promise<CredentialRecord | null> {
    return parse(this.db.stmt('SELECT record FROM vault_credentials WHERE id = ? AND vault_id = ? AND owner_id = ?').get(id, vaultId, ownerId));
  }

  async listCredentials(ownerId: string, vaultId: string, query: VaultListQuery): Promise<Page<CredentialRecord>> {
    const limit = checkLimit(query.limit);
    const order = orderOf(query.order);
    const list = `vault_credentials:${vaultId}`;
    const page = keysetPage(list, order, query.page);
    const where = ['vault_id = ?', 'owner_id = ?', ...(query.include_archived ? [] : ['archived = 0']), ...page.where].join(' AND ');
    const rows = this.db.stmt(`SELECT record FROM vault_credentials WHERE ${where} ${page.orderBy} LIMIT ?`).all(vaultId, ownerId, ...page.params, limit + 1);
    return pageOf(list, order, limit, rows.map((r) => parse<CredentialRecord>(r) as CredentialRecord), (c) => [c.created_at, c.id]);
  }

  async countCredentials(ownerId: string, vaultId: string): Promise<number> {
    return (this.db.stmt('SELECT COUNT(*) AS n FROM vault_credentials WHERE vault_id = ? AND owner_id = ?').get(vaultId, ownerId) as { n: number }).n;
  }

  async deleteCredential(ownerId: string, vaultId: string, id: string, webhooks: WebhookOutbox = []): Promise<boolean> {
    return this.db.write(() => {
      const removed = this.db.stmt('DELETE FROM vault_credentials WHERE id = ? AND vault_id = ? AND owner_id = ?').run(id, vaultId, ownerId).changes === 1;
      if (removed) insertDeliveries(this.db, webhooks);
      return removed;
    });
  }

  async activeCredentials(ownerId: string, vaultIds: readonly string[]): Promise<readonly CredentialRecord[]> {
    const found: CredentialRecord[] = [];
    for (const vaultId of vaultIds) {
      const vault = this.db.stmt('SELECT archived FROM vaults WHERE id = ? AND owner_id = ?').get(vaultId, ownerId) as { archived: number } | undefined;
      if (!vault || vault.archived) continue;
      const rows = this.db.stmt('SELECT record FROM vault_credentials WHERE vault_id = ? AND owner_id = ? AND archived = 0 ORDER BY created_at, id').all(vaultId, ownerId);
      found.push(...rows.map((r) => parse<CredentialRecord>(r) as CredentialRecord));
    }
    return found;
  }

  async refreshDue(now: string, limit: number): Promise<readonly CredentialRecord[]> {
    const rows = this.db
      .stmt(
        `SELECT c.record FROM vault_credentials c JOIN vaults v ON v.id = c.vault_id AND v.owner_id = c.owner_id
         WHERE c.archived = 0 AND v.archived = 0 AND json_extract(c.record, '$.refresh.state.next_attempt_at') <= ?
         ORDER BY json_extract(c.record, '$.refresh.state.next_attempt_at'), c.id LIMIT ?`,
      )
      .all(now, checkLimit(limit));
    return rows.map((r) => parse<CredentialRecord>(r) as CredentialRecord);
  }
}
