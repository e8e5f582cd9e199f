import type { CredentialAuth, CredentialRecord, RefreshState, VaultRecord } from '@berth/contracts';
import type { McpOAuthValidation } from '@berth/vaults-domain';

/** A vault as the SDK reads it (`BetaManagedAgentsVault`). */
export const renderVault = (v: VaultRecord) => ({
  type: 'vault',
  id: v.id,
  display_name: v.display_name,
  metadata: v.metadata,
  created_at: v.created_at,
  updated_at: v.updated_at,
  archived_at: v.archived_at,
});

/** The auth as the SDK reads it: an `mcp_oauth` one always says whether it refreshes (`refresh`, null: it does not). */
const renderAuth = (auth: CredentialAuth) => (auth.type === 'mcp_oauth' ? { ...auth, refresh: auth.refresh ?? null } : auth);

/** Where refreshing stands, for people: what went wrong last in words, never an answer's body (`mcp_oauth_validate` has that). */
const renderRefreshState = (state: RefreshState) => ({
  status: state.status,
  next_attempt_at: state.next_attempt_at,
  last_attempt_at: state.last_attempt_at,
  last_refreshed_at: state.last_refreshed_at,
  last_error: state.last_error?.message ?? null,
});

/**
 * A credential as the SDK reads it (`BetaManagedAgentsCredential`): its auth without the secrets,
 * never a sealed value; `berth.refresh` is where refreshing an `mcp_oauth` token stands (null for a
 * credential that does not refresh).
 */
export const renderCredential = (c: CredentialRecord) => ({
  type: 'vault_credential',
  id: c.id,
  vault_id: c.vault_id,
  display_name: c.display_name,
  metadata: c.metadata,
  auth: renderAuth(c.auth),
  created_at: c.created_at,
  updated_at: c.updated_at,
  archived_at: c.archived_at,
  berth: { refresh: c.refresh ? renderRefreshState(c.refresh.state) : null },
});

/**
 * A validation as the SDK reads it (`BetaManagedAgentsCredentialValidation`). `mcp_probe` is null
 * because no probe ran; `refresh` is the refresher's last exchange with the token endpoint (or
 * that there was no refresh token to try); `berth` says what was checked.
 */
export const renderValidation = (c: CredentialRecord, check: McpOAuthValidation, at: string) => ({
  type: 'vault_credential_validation',
  credential_id: c.id,
  vault_id: c.vault_id,
  status: check.status,
  has_refresh_token: check.has_refresh_token,
  mcp_probe: null,
  refresh: check.refresh,
  validated_at: at,
  berth: { probed: false, expired: check.expired, detail: check.detail, refresh: c.refresh ? renderRefreshState(c.refresh.state) : null },
});
