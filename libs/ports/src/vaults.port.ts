import type { CredentialRecord, VaultRecord } from '@berth/contracts';
import type { Page, PageQuery, WebhookOutbox } from './read-models.port';

export type VaultListQuery = PageQuery & Readonly<{ include_archived?: boolean }>;

/** Writes that make a webhook event take its deliveries (`webhooks`) and store them atomically with the change (see WebhookOutbox). */
export interface VaultStore {
  /** Inserts or replaces (same owner only). */
  put(vault: VaultRecord, webhooks?: WebhookOutbox): Promise<void>;
  get(ownerId: string, id: string): Promise<VaultRecord | null>;
  list(ownerId: string, query: VaultListQuery): Promise<Page<VaultRecord>>;
  /** Removes the vault and every credential in it; false when the owner has no such vault. */
  delete(ownerId: string, id: string, webhooks?: WebhookOutbox): Promise<boolean>;

  /** Inserts or replaces (same owner and vault only). */
  putCredential(credential: CredentialRecord, webhooks?: WebhookOutbox): Promise<void>;
  /**
   * Replaces a credential that is still at `expectedVersion` (`credentialVersion`; same owner and
   * vault), with its webhook deliveries; throws ConcurrencyError when it changed meanwhile or is
   * gone, so no write overwrites one it did not see (a user's update, the refresher's).
   */
  updateCredential(credential: CredentialRecord, expectedVersion: number, webhooks?: WebhookOutbox): Promise<void>;
  getCredential(ownerId: string, vaultId: string, id: string): Promise<CredentialRecord | null>;
  listCredentials(ownerId: string, vaultId: string, query: VaultListQuery): Promise<Page<CredentialRecord>>;
  countCredentials(ownerId: string, vaultId: string): Promise<number>;
  deleteCredential(ownerId: string, vaultId: string, id: string, webhooks?: WebhookOutbox): Promise<boolean>;
  /** The credentials in use for a session: not archived, in vaults of `ownerId` that are not archived, in vault order. */
  activeCredentials(ownerId: string, vaultIds: readonly string[]): Promise<readonly CredentialRecord[]>;
  /**
   * Credentials of every owner whose refresh is due at `now` (`refresh.state.next_attempt_at` at or
   * before it), not archived and in vaults that are not archived, soonest first, at most `limit`.
   */
  refreshDue(now: string, limit: number): Promise<readonly CredentialRecord[]>;
}
