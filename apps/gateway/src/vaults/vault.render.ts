import type { CredentialRecord, McpOAuthValidation, VaultRecord } from '@berth/contracts';

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

/** A credential as the SDK reads it (`BetaManagedAgentsCredential`): its auth without the secret, never the sealed value. */
export const renderCredential = (c: CredentialRecord) => ({
  type: 'vault_credential',
  id: c.id,
  vault_id: c.vault_id,
  display_name: c.display_name,
  metadata: c.metadata,
  auth: c.auth,
  created_at: c.created_at,
  updated_at: c.updated_at,
  archived_at: c.archived_at,
});

/**
 * A validation as the SDK reads it (`BetaManagedAgentsCredentialValidation`). `mcp_probe` is null
 * because no probe ran; `refresh` says no refresh token was there to try when the token expired;
 * `berth` says what was checked.
 */
export const renderValidation = (c: CredentialRecord, check: McpOAuthValidation, at: string) => ({
  type: 'vault_credential_validation',
  credential_id: c.id,
  vault_id: c.vault_id,
  status: check.status,
  has_refresh_token: false,
  mcp_probe: null,
  refresh: check.expired ? { status: 'no_refresh_token', http_response: null } : null,
  validated_at: at,
  berth: { probed: false, expired: check.expired, detail: check.detail },
});
