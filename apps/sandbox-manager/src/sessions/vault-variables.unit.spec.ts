import type { CredentialAuth, CredentialRecord } from '@berth/contracts';
import { MemoryStore } from '@berth/testing';
import { VaultVariables } from './vault-variables';

const now = '2026-01-01T00:00:00.000Z';
const credential = (id: string, vaultId: string, auth: CredentialAuth, archived = false): CredentialRecord => ({
  id,
  owner_id: 'own_a',
  vault_id: vaultId,
  display_name: null,
  metadata: {},
  auth,
  secret: { key_id: 'k', iv: 'AAAA', tag: 'AAAA', ciphertext: 'never-opened-here' } as unknown as CredentialRecord['secret'],
  created_at: now,
  updated_at: now,
  archived_at: archived ? now : null,
});
const variable = (name: string): CredentialAuth => ({ type: 'environment_variable', secret_name: name, networking: { type: 'unrestricted' }, injection_location: { header: true, body: false } });

describe("a session's vault variables", () => {
  it('sets each live environment_variable credential as its placeholder, never its secret; MCP credentials and archived ones set nothing; the first of a name wins', async () => {
    const store = new MemoryStore();
    for (const id of ['vlt_1', 'vlt_2']) await store.vaults.put({ id, owner_id: 'own_a', display_name: id, metadata: {}, created_at: now, updated_at: now, archived_at: null });
    await store.vaults.putCredential(credential('vcrd_a', 'vlt_1', variable('API_TOKEN')));
    await store.vaults.putCredential(credential('vcrd_b', 'vlt_1', { type: 'static_bearer', mcp_server_url: 'https://mcp.test/mcp' }));
    await store.vaults.putCredential(credential('vcrd_c', 'vlt_1', variable('OLD_TOKEN'), true));
    await store.vaults.putCredential(credential('vcrd_d', 'vlt_2', variable('API_TOKEN')));
    await store.vaults.putCredential(credential('vcrd_e', 'vlt_2', variable('OTHER')));

    const variables = await new VaultVariables(store.vaults).read('own_a', ['vlt_1', 'vlt_2']);

    expect(variables).toEqual({ API_TOKEN: 'berth-vault-placeholder-vcrd_a', OTHER: 'berth-vault-placeholder-vcrd_e' });
    expect(JSON.stringify(variables)).not.toContain('never-opened-here');
    expect(await new VaultVariables(store.vaults).read('own_a', [])).toEqual({});
    expect(await new VaultVariables(store.vaults).read('own_other', ['vlt_1'])).toEqual({});
  });
});
