import {
  MAX_VAULT_CREDENTIALS,
  credentialAfterUpdate,
  credentialFromCreate,
  credentialMcpServerUrl,
  credentialVersion,
  encodeCredentialSecret,
  patchMetadata,
  refreshSecretAad,
  type CredentialAuth,
  type CredentialChange,
  type CredentialCreateParams,
  type CredentialRecord,
  type CredentialRefresh,
  type CredentialSecret,
  type CredentialUpdateParams,
  type RefreshSecrets,
  type VaultCreateParams,
  type VaultRecord,
  type VaultUpdateParams,
} from '@berth/contracts';
import { BerthError, ConcurrencyError, IllegalStateError, NotFoundError, ValidationError, type Clock, type IdGenerator } from '@berth/core';
import type { SecretBox, VaultStore, WebhookOutbox } from '@berth/ports';
import { mcpOAuthValidation, startedRefreshState, type RefreshPolicy } from '@berth/vaults-domain';
import type { TargetPolicy } from '@berth/webhooks-domain';
import { DEFAULT_PAGE_LIMIT } from '../http/schemas';
import type { RouteInput } from '../http/route';
import type { ResourceWebhooks } from '../webhooks/delivery/resource-webhooks';
import { tokenEndpointRefusal } from './refresh/token-endpoint-policy';
import { renderCredential, renderValidation, renderVault } from './vault.render';
import type { VaultRoutes } from './vaults.schemas';

export type VaultsServiceDeps = Readonly<{
  vaults: VaultStore;
  secrets: SecretBox;
  clock: Clock;
  ids: IdGenerator;
  webhooks: Pick<ResourceWebhooks, 'plan'>;
  /** The refresher's policy: a new or updated credential's next refresh is planned by it. */
  refresh: RefreshPolicy;
  /** Where a token endpoint may point: the rule webhook deliveries follow. */
  targets: TargetPolicy;
}>;

const vaultNotFound = () => new NotFoundError('vault not found', 'VAULT_NOT_FOUND');
const credentialNotFound = () => new NotFoundError('credential not found', 'CREDENTIAL_NOT_FOUND');

/** What a credential is unique by within a vault: its MCP server, or its variable name. */
const credentialKey = (auth: CredentialAuth): string => credentialMcpServerUrl(auth) ?? `env:${auth.type === 'environment_variable' ? auth.secret_name : ''}`;

/** Writes of one credential retried on a version conflict (the refresher, or another request, wrote it meanwhile) before answering 409. */
const WRITE_ATTEMPTS = 5;

/** Turns a contract rule's message into a 400 on `auth`. */
function asBadInput<T>(f: () => T): T {
  try {
    return f();
  } catch (e) {
    throw new ValidationError(e instanceof Error ? e.message : String(e), 'auth');
  }
}

/**
 * Vaults and credentials are configuration, written straight to the store. A credential's secrets
 * are sealed here (AES-256-GCM, bound to the credential id, under the active server key) and never
 * answered again, not even in the create response; the egress opens the access token, the
 * refresher (`CredentialRefresher`) the refresh token and client secret. A credential is written
 * at the version it was read at, so an update and a refresh never overwrite each other.
 */
export class VaultsService {
  constructor(private readonly d: VaultsServiceDeps) {}

  async create(owner: string, body: VaultCreateParams) {
    const now = this.now();
    const vault: VaultRecord = { id: this.d.ids.next('vlt'), owner_id: owner, display_name: body.display_name, metadata: body.metadata ?? {}, created_at: now, updated_at: now, archived_at: null };
    await this.d.vaults.put(vault, await this.d.webhooks.plan({ type: 'vault.created', id: vault.id, ownerId: owner, at: now }));
    return renderVault(vault);
  }

  async list(owner: string, query: RouteInput<typeof VaultRoutes.list>['query']) {
    const page = await this.d.vaults.list(owner, { limit: query.limit ?? DEFAULT_PAGE_LIMIT, page: query.page ?? null, include_archived: query.include_archived });
    return { data: page.data.map(renderVault), next_page: page.next_page };
  }

  async get(owner: string, id: string) {
    return renderVault(await this.vault(owner, id));
  }

  async update(owner: string, id: string, body: VaultUpdateParams) {
    const vault = this.live(await this.vault(owner, id));
    const next: VaultRecord = {
      ...vault,
      display_name: body.display_name ?? vault.display_name,
      metadata: body.metadata === null ? {} : patchMetadata(vault.metadata, body.metadata),
      updated_at: this.now(),
    };
    await this.d.vaults.put(next);
    return renderVault(next);
  }

  async archive(owner: string, id: string) {
    const vault = await this.vault(owner, id);
    if (vault.archived_at) return renderVault(vault);
    const now = this.now();
    const next: VaultRecord = { ...vault, archived_at: now, updated_at: now };
    await this.d.vaults.put(next, await this.d.webhooks.plan({ type: 'vault.archived', id, ownerId: owner, at: now }));
    return renderVault(next);
  }

  async delete(owner: string, id: string) {
    const webhooks = await this.d.webhooks.plan({ type: 'vault.deleted', id, ownerId: owner, at: this.now() });
    if (!(await this.d.vaults.delete(owner, id, webhooks))) throw vaultNotFound();
    return { id, type: 'vault_deleted' };
  }

  async createCredential(owner: string, vaultId: string, body: CredentialCreateParams) {
    this.live(await this.vault(owner, vaultId));
    const { auth, secret, refresh } = asBadInput(() => credentialFromCreate(body.auth, this.d.clock.now()));
    if (auth.type === 'mcp_oauth' && auth.refresh) this.allowedTokenEndpoint(auth.refresh.token_endpoint);
    if ((await this.d.vaults.countCredentials(owner, vaultId)) >= MAX_VAULT_CREDENTIALS) {
      throw new IllegalStateError('VAULT_CREDENTIAL_LIMIT_REACHED', `a vault holds at most ${MAX_VAULT_CREDENTIALS} credentials`);
    }
    const taken = (await this.d.vaults.activeCredentials(owner, [vaultId])).find((c) => credentialKey(c.auth) === credentialKey(auth));
    if (taken) throw new IllegalStateError('CREDENTIAL_CONFLICT', `credential ${taken.id} of this vault already covers ${credentialMcpServerUrl(auth) ?? 'this variable'}; update or archive it`);
    const now = this.now();
    const id = this.d.ids.next('vcrd');
    const credential: CredentialRecord = {
      id,
      owner_id: owner,
      vault_id: vaultId,
      display_name: body.display_name ?? null,
      metadata: body.metadata ?? {},
      auth,
      secret: this.seal(secret, id),
      refresh: refresh === null || auth.type !== 'mcp_oauth' ? null : this.sealedRefresh(id, refresh, startedRefreshState(auth.expires_at, null, this.d.refresh)),
      version: 0,
      created_at: now,
      updated_at: now,
      archived_at: null,
    };
    await this.d.vaults.putCredential(credential, await this.d.webhooks.plan({ type: 'vault_credential.created', id, ownerId: owner, vaultId, at: now }));
    return renderCredential(credential);
  }

  async listCredentials(owner: string, vaultId: string, query: RouteInput<typeof VaultRoutes.listCredentials>['query']) {
    await this.vault(owner, vaultId);
    const page = await this.d.vaults.listCredentials(owner, vaultId, { limit: query.limit ?? DEFAULT_PAGE_LIMIT, page: query.page ?? null, include_archived: query.include_archived });
    return { data: page.data.map(renderCredential), next_page: page.next_page };
  }

  async getCredential(owner: string, vaultId: string, id: string) {
    return renderCredential(await this.credential(owner, vaultId, id));
  }

  async updateCredential(owner: string, vaultId: string, id: string, body: CredentialUpdateParams) {
    this.live(await this.vault(owner, vaultId));
    const next = await this.write(owner, vaultId, id, [], (current) => {
      if (current.archived_at) throw new IllegalStateError('CREDENTIAL_ARCHIVED', 'this credential is archived and read-only');
      const update = body.auth;
      const change = update ? asBadInput(() => credentialAfterUpdate(current.auth, update, this.d.clock.now())) : null;
      return {
        ...current,
        ...(change === null ? {} : this.changed(current, change)),
        display_name: body.display_name === undefined ? current.display_name : body.display_name,
        metadata: body.metadata === null ? {} : patchMetadata(current.metadata, body.metadata),
        updated_at: this.now(),
      };
    });
    return renderCredential(next);
  }

  /**
   * `mcp_oauth_validate`, answered from what Berth knows: the token's expiry. The MCP server is not
   * called (the gateway sends nothing to a URL an API user chose), so a token not known to have
   * expired is `unknown`.
   */
  async validateMcpOAuth(owner: string, vaultId: string, id: string) {
    await this.vault(owner, vaultId);
    const credential = await this.credential(owner, vaultId, id);
    const { auth } = credential;
    if (auth.type !== 'mcp_oauth') {
      throw new BerthError('CREDENTIAL_NOT_MCP_OAUTH', 400, `credential ${id} is a ${auth.type} credential; mcp_oauth_validate checks mcp_oauth credentials only`, { field: 'credential_id' });
    }
    const now = this.d.clock.now();
    return renderValidation(credential, mcpOAuthValidation(auth, credential.refresh?.state ?? null, now), now.toISOString());
  }

  async archiveCredential(owner: string, vaultId: string, id: string) {
    await this.vault(owner, vaultId);
    const current = await this.credential(owner, vaultId, id);
    if (current.archived_at) return renderCredential(current);
    const now = this.now();
    const webhooks = await this.d.webhooks.plan({ type: 'vault_credential.archived', id, ownerId: owner, vaultId, at: now });
    // Archived by another request meanwhile: that one sent the event.
    const next = await this.write(owner, vaultId, id, webhooks, (latest) => (latest.archived_at ? null : { ...latest, archived_at: now, updated_at: now }));
    return renderCredential(next);
  }

  async deleteCredential(owner: string, vaultId: string, id: string) {
    await this.vault(owner, vaultId);
    const webhooks = await this.d.webhooks.plan({ type: 'vault_credential.deleted', id, ownerId: owner, vaultId, at: this.now() });
    if (!(await this.d.vaults.deleteCredential(owner, vaultId, id, webhooks))) throw credentialNotFound();
    return { id, type: 'vault_credential_deleted' };
  }

  private seal(secret: CredentialSecret, credentialId: string) {
    return this.d.secrets.seal(encodeCredentialSecret(secret), credentialId);
  }

  private sealRefreshSecret(credentialId: string, name: keyof RefreshSecrets, value: string) {
    return this.d.secrets.seal(value, refreshSecretAad(credentialId, name));
  }

  private sealedRefresh(credentialId: string, secrets: RefreshSecrets, state: CredentialRefresh['state']): CredentialRefresh {
    return {
      refresh_token: this.sealRefreshSecret(credentialId, 'refresh_token', secrets.refresh_token),
      client_secret: secrets.client_secret === null ? null : this.sealRefreshSecret(credentialId, 'client_secret', secrets.client_secret),
      state,
    };
  }

  /**
   * The fields an auth update changes: the public auth, the secrets sent (sealed), and for a
   * credential that refreshes, refreshing started afresh (a new token, expiry or refresh token
   * gives a credential whose refresh failed a new start).
   */
  private changed(current: CredentialRecord, change: CredentialChange): Pick<CredentialRecord, 'auth' | 'secret' | 'refresh'> {
    const secret = change.secret ? this.seal(change.secret, current.id) : current.secret;
    const refresh = current.refresh ?? null;
    if (refresh === null || change.auth.type !== 'mcp_oauth') return { auth: change.auth, secret, refresh };
    const { refresh_token, client_secret } = change.refresh;
    return {
      auth: change.auth,
      secret,
      refresh: {
        refresh_token: refresh_token ? this.sealRefreshSecret(current.id, 'refresh_token', refresh_token) : refresh.refresh_token,
        client_secret: client_secret ? this.sealRefreshSecret(current.id, 'client_secret', client_secret) : refresh.client_secret,
        state: startedRefreshState(change.auth.expires_at, refresh.state, this.d.refresh),
      },
    };
  }

  /**
   * Reads the credential, applies `change` and writes the result at the version read (one more),
   * with `webhooks`; read again and applied again when it changed meanwhile. `change` answering
   * null writes nothing (the credential as read is the answer).
   */
  private async write(owner: string, vaultId: string, id: string, webhooks: WebhookOutbox, change: (current: CredentialRecord) => CredentialRecord | null): Promise<CredentialRecord> {
    for (let attempt = 1; ; attempt++) {
      const current = await this.credential(owner, vaultId, id);
      const changed = change(current);
      if (changed === null) return current;
      const next = { ...changed, version: credentialVersion(current) + 1 };
      try {
        await this.d.vaults.updateCredential(next, credentialVersion(current), webhooks);
        return next;
      } catch (e) {
        if (!(e instanceof ConcurrencyError) || attempt >= WRITE_ATTEMPTS) throw e;
      }
    }
  }

  /** A token endpoint Berth may send the refresh token to, else a 400 naming the rule. */
  private allowedTokenEndpoint(url: string): void {
    const refusal = tokenEndpointRefusal(url, this.d.targets);
    if (refusal !== null) throw new BerthError('VAULT_TOKEN_ENDPOINT_NOT_ALLOWED', 400, `auth.refresh.token_endpoint: ${refusal}`, { field: 'auth.refresh.token_endpoint' });
  }

  private async vault(owner: string, id: string): Promise<VaultRecord> {
    const vault = await this.d.vaults.get(owner, id);
    if (!vault) throw vaultNotFound();
    return vault;
  }

  private live(vault: VaultRecord): VaultRecord {
    if (vault.archived_at) throw new IllegalStateError('VAULT_ARCHIVED', 'this vault is archived and read-only');
    return vault;
  }

  private async credential(owner: string, vaultId: string, id: string): Promise<CredentialRecord> {
    const credential = await this.d.vaults.getCredential(owner, vaultId, id);
    if (!credential) throw credentialNotFound();
    return credential;
  }

  private now(): string {
    return this.d.clock.now().toISOString();
  }
}
