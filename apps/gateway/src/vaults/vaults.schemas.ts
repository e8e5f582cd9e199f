import { z } from 'zod';
import { CredentialCreateParamsSchema, CredentialUpdateParamsSchema, VaultCreateParamsSchema, VaultUpdateParamsSchema } from '@berth/contracts';
import { defineRoute } from '../http/route';
import { PageQueryShape, QueryBool, idParam } from '../http/schemas';

const VaultParams = z.object({ vault_id: idParam('vault_id', 'vlt') });
const CredentialParams = VaultParams.extend({ credential_id: idParam('credential_id', 'vcrd') });
const ListQuery = z.object({ ...PageQueryShape, include_archived: QueryBool.optional() });

/** `client.beta.vaults` and `client.beta.vaults.credentials`, as the SDK calls them. */
export const VaultRoutes = {
  create: defineRoute({ method: 'POST', path: '/v1/vaults', tag: 'vaults', summary: 'Create a vault', body: VaultCreateParamsSchema }),
  list: defineRoute({ method: 'GET', path: '/v1/vaults', tag: 'vaults', summary: 'List vaults', query: ListQuery }),
  get: defineRoute({ method: 'GET', path: '/v1/vaults/{vault_id}', tag: 'vaults', summary: 'Retrieve a vault', params: VaultParams }),
  update: defineRoute({ method: 'POST', path: '/v1/vaults/{vault_id}', tag: 'vaults', summary: 'Update a vault', params: VaultParams, body: VaultUpdateParamsSchema }),
  delete: defineRoute({ method: 'DELETE', path: '/v1/vaults/{vault_id}', tag: 'vaults', summary: 'Delete a vault and its credentials', params: VaultParams }),
  archive: defineRoute({ method: 'POST', path: '/v1/vaults/{vault_id}/archive', tag: 'vaults', summary: 'Archive a vault (read-only, its credentials no longer used)', params: VaultParams }),
  createCredential: defineRoute({
    method: 'POST',
    path: '/v1/vaults/{vault_id}/credentials',
    tag: 'vaults',
    summary: 'Create a credential (its secret is write-only)',
    params: VaultParams,
    body: CredentialCreateParamsSchema,
  }),
  listCredentials: defineRoute({ method: 'GET', path: '/v1/vaults/{vault_id}/credentials', tag: 'vaults', summary: 'List credentials', params: VaultParams, query: ListQuery }),
  getCredential: defineRoute({ method: 'GET', path: '/v1/vaults/{vault_id}/credentials/{credential_id}', tag: 'vaults', summary: 'Retrieve a credential (never its secret)', params: CredentialParams }),
  updateCredential: defineRoute({
    method: 'POST',
    path: '/v1/vaults/{vault_id}/credentials/{credential_id}',
    tag: 'vaults',
    summary: 'Update a credential (a new secret replaces the old; the auth type cannot change)',
    params: CredentialParams,
    body: CredentialUpdateParamsSchema,
  }),
  deleteCredential: defineRoute({ method: 'DELETE', path: '/v1/vaults/{vault_id}/credentials/{credential_id}', tag: 'vaults', summary: 'Delete a credential', params: CredentialParams }),
  validateMcpOAuth: defineRoute({
    method: 'POST',
    path: '/v1/vaults/{vault_id}/credentials/{credential_id}/mcp_oauth_validate',
    tag: 'vaults',
    summary: "Validate an mcp_oauth credential (its expiry: Berth does not call the MCP server)",
    params: CredentialParams,
  }),
  archiveCredential: defineRoute({ method: 'POST', path: '/v1/vaults/{vault_id}/credentials/{credential_id}/archive', tag: 'vaults', summary: 'Archive a credential', params: CredentialParams }),
} as const;
