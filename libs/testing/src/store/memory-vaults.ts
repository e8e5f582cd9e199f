import { credentialVersion, type CredentialRecord, type VaultRecord } from '@berth/contracts';
import { ConcurrencyError } from '@berth/core';
import type { Page, VaultListQuery, VaultStore, WebhookOutbox } from '@berth/ports';
import { pageRows } from './paging';
import type { MemoryWebhooks } from './memory-webhooks';

export class MemoryVaults implements VaultStore {
  private readonly vaults = new Map<string, VaultRecord>();
  private readonly credentials = new Map<string, CredentialRecord>();

  constructor(private readonly webhooks: MemoryWebhooks) {}

  async put(vault: VaultRecord, webhooks: WebhookOutbox = []): Promise<void> {
    const stored = this.vaults.get(vault.id);
    if (stored && stored.owner_id !== vault.owner_id) return;
    this.webhooks.withDeliveries(webhooks, () => {
      this.vaults.set(vault.id, structuredClone(vault));
      return true;
    });
  }

  async get(ownerId: string, id: string): Promise<VaultRecord | null> {
    const v = this.vaults.get(id);
    return v && v.owner_id === ownerId ? structuredClone(v) : null;
  }

  async list(ownerId: string, query: VaultListQuery): Promise<Page<VaultRecord>> {
    const rows = [...this.vaults.values()].filter((v) => v.owner_id === ownerId && (query.include_archived || v.archived_at === null));
    return structuredClone(pageRows('vaults', rows, query, (v) => [v.created_at, v.id]));
  }

  async delete(ownerId: string, id: string, webhooks: WebhookOutbox = []): Promise<boolean> {
    const v = this.vaults.get(id);
    if (!v || v.owner_id !== ownerId) return false;
    return this.webhooks.withDeliveries(webhooks, () => {
      this.vaults.delete(id);
      for (const [key, c] of this.credentials) if (c.vault_id === id) this.credentials.delete(key);
      return true;
    });
  }

  async putCredential(credential: CredentialRecord, webhooks: WebhookOutbox = []): Promise<void> {
    const stored = this.credentials.get(credential.id);
    if (stored && (stored.owner_id !== credential.owner_id || stored.vault_id !== credential.vault_id)) return;
    this.webhooks.withDeliveries(webhooks, () => {
      this.credentials.set(credential.id, structuredClone(credential));
      return true;
    });
  }

  async updateCredential(credential: CredentialRecord, expectedVersion: number, webhooks: WebhookOutbox = []): Promise<void> {
    const stored = this.credentials.get(credential.id);
    if (!stored || stored.owner_id !== credential.owner_id || stored.vault_id !== credential.vault_id || credentialVersion(stored) !== expectedVersion) {
      throw new ConcurrencyError(`credential ${credential.id} is not at version ${expectedVersion} (changed meanwhile, or gone)`);
    }
    this.webhooks.withDeliveries(webhooks, () => {
      this.credentials.set(credential.id, structuredClone(credential));
      return true;
    });
  }

  async getCredential(ownerId: string, vaultId: string, id: string): Promise<CredentialRecord | null> {
    const c = this.credentials.get(id);
    return c && c.owner_id === ownerId && c.vault_id === vaultId ? structuredClone(c) : null;
  }

  async listCredentials(ownerId: string, vaultId: string, query: VaultListQuery): Promise<Page<CredentialRecord>> {
    const rows = [...this.credentials.values()].filter((c) => c.owner_id === ownerId && c.vault_id === vaultId && (query.include_archived || c.archived_at === null));
    return structuredClone(pageRows(`vault_credentials:${vaultId}`, rows, query, (c) => [c.created_at, c.id]));
  }

  async countCredentials(ownerId: string, vaultId: string): Promise<number> {
    return [...this.credentials.values()].filter((c) => c.owner_id === ownerId && c.vault_id === vaultId).length;
  }

  async deleteCredential(ownerId: string, vaultId: string, id: string, webhooks: WebhookOutbox = []): Promise<boolean> {
    const c = this.credentials.get(id);
    if (!c || c.owner_id !== ownerId || c.vault_id !== vaultId) return false;
    return this.webhooks.withDeliveries(webhooks, () => this.credentials.delete(id));
  }

  async activeCredentials(ownerId: string, vaultIds: readonly string[]): Promise<readonly CredentialRecord[]> {
    const order = (a: CredentialRecord, b: CredentialRecord) => (a.created_at + a.id < b.created_at + b.id ? -1 : 1);
    return vaultIds.flatMap((vaultId) => {
      const vault = this.vaults.get(vaultId);
      if (!vault || vault.owner_id !== ownerId || vault.archived_at !== null) return [];
      return [...this.credentials.values()].filter((c) => c.vault_id === vaultId && c.owner_id === ownerId && c.archived_at === null).sort(order).map((c) => structuredClone(c));
    });
  }

  async refreshDue(now: string, limit: number): Promise<readonly CredentialRecord[]> {
    const dueAt = (c: CredentialRecord) => c.refresh?.state.next_attempt_at ?? null;
    return [...this.credentials.values()]
      .filter((c) => {
        const at = dueAt(c);
        return at !== null && at <= now && c.archived_at === null && this.vaults.get(c.vault_id)?.archived_at === null;
      })
      .sort((a, b) => ((dueAt(a) as string) + a.id < (dueAt(b) as string) + b.id ? -1 : 1))
      .slice(0, limit)
      .map((c) => structuredClone(c));
  }
}
