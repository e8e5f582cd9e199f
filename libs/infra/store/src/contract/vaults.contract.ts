import type { CredentialRecord, RefreshState } from '@berth/contracts';
import { ConcurrencyError } from '@berth/core';
import type { BerthStore } from '@berth/ports';
import { at, credential, vault } from './fixtures';

const sealed = { key_id: 'k1', iv: 'aXY=', ciphertext: 'cnQ=', tag: 'dGFn' };
/** An mcp_oauth credential that refreshes, next due at `due` (null: nothing planned). */
const refreshing = (id: string, due: string | null, over: Partial<CredentialRecord> = {}): CredentialRecord => {
  const state: RefreshState = { status: 'scheduled', next_attempt_at: due, last_attempt_at: null, last_refreshed_at: null, consecutive_failures: 0, last_error: null };
  return credential({
    id,
    auth: {
      type: 'mcp_oauth',
      mcp_server_url: `https://${id}.example.com/mcp`,
      expires_at: at(9),
      refresh: { token_endpoint: 'https://auth.example.com/token', client_id: 'c', token_endpoint_auth: { type: 'none' }, scope: null, resource: null },
    },
    refresh: { refresh_token: sealed, client_secret: null, state },
    version: 1,
    ...over,
  });
};

export function vaultsContract(store: () => BerthStore): void {
  describe('vaults and credentials', () => {
    it('keeps vaults per owner and hides archived ones unless asked', async () => {
      const { vaults } = store();
      await vaults.put(vault({ id: 'vlt_1', created_at: at(1) }));
      await vaults.put(vault({ id: 'vlt_2', created_at: at(2), archived_at: at(3) }));
      await vaults.put(vault({ id: 'vlt_1', owner_id: 'owner_b', display_name: 'hijack' }));

      expect((await vaults.get('owner_a', 'vlt_1'))?.display_name).toBe('Vault vlt_1');
      expect(await vaults.get('owner_b', 'vlt_1')).toBeNull();
      expect((await vaults.list('owner_a', { limit: 10 })).data.map((v) => v.id)).toEqual(['vlt_1']);
      expect((await vaults.list('owner_a', { limit: 10, include_archived: true })).data.map((v) => v.id)).toEqual(['vlt_2', 'vlt_1']);
      expect((await vaults.list('owner_b', { limit: 10, include_archived: true })).data).toEqual([]);
    });

    it('keeps credentials in their vault and owner, in pages', async () => {
      const { vaults } = store();
      await vaults.put(vault({ id: 'vlt_1' }));
      await vaults.putCredential(credential({ id: 'vcrd_1', created_at: at(1) }));
      await vaults.putCredential(credential({ id: 'vcrd_2', created_at: at(2) }));
      await vaults.putCredential(credential({ id: 'vcrd_3', created_at: at(3), archived_at: at(4) }));
      await vaults.putCredential(credential({ id: 'vcrd_1', owner_id: 'owner_b', display_name: 'hijack' }));

      expect(await vaults.getCredential('owner_a', 'vlt_1', 'vcrd_1')).toMatchObject({ display_name: null });
      expect(await vaults.getCredential('owner_b', 'vlt_1', 'vcrd_1')).toBeNull();
      expect(await vaults.getCredential('owner_a', 'vlt_2', 'vcrd_1')).toBeNull();
      const first = await vaults.listCredentials('owner_a', 'vlt_1', { limit: 1 });
      expect(first.data.map((c) => c.id)).toEqual(['vcrd_2']);
      expect((await vaults.listCredentials('owner_a', 'vlt_1', { limit: 5, page: first.next_page })).data.map((c) => c.id)).toEqual(['vcrd_1']);
      expect((await vaults.listCredentials('owner_a', 'vlt_1', { limit: 5, include_archived: true })).data).toHaveLength(3);
      expect(await vaults.countCredentials('owner_a', 'vlt_1')).toBe(3);
    });

    it('gives the active credentials of live vaults, in the order the vaults were named', async () => {
      const { vaults } = store();
      await vaults.put(vault({ id: 'vlt_1' }));
      await vaults.put(vault({ id: 'vlt_2' }));
      await vaults.put(vault({ id: 'vlt_gone', archived_at: at(2) }));
      await vaults.put(vault({ id: 'vlt_b', owner_id: 'owner_b' }));
      await vaults.putCredential(credential({ id: 'vcrd_1', vault_id: 'vlt_1' }));
      await vaults.putCredential(credential({ id: 'vcrd_2', vault_id: 'vlt_2' }));
      await vaults.putCredential(credential({ id: 'vcrd_3', vault_id: 'vlt_2', archived_at: at(3) }));
      await vaults.putCredential(credential({ id: 'vcrd_4', vault_id: 'vlt_gone' }));
      await vaults.putCredential(credential({ id: 'vcrd_5', vault_id: 'vlt_b', owner_id: 'owner_b' }));

      expect((await vaults.activeCredentials('owner_a', ['vlt_2', 'vlt_1', 'vlt_gone', 'vlt_b', 'vlt_missing'])).map((c) => c.id)).toEqual(['vcrd_2', 'vcrd_1']);
      expect(await vaults.activeCredentials('owner_b', ['vlt_1'])).toEqual([]);
    });

    it('updates a credential only at the version it was read at (a record from before versions is at 0), for its owner and vault', async () => {
      const { vaults } = store();
      await vaults.put(vault({ id: 'vlt_1' }));
      await vaults.putCredential(credential({ id: 'vcrd_old' }));
      await vaults.putCredential(credential({ id: 'vcrd_1', version: 3 }));

      await vaults.updateCredential(credential({ id: 'vcrd_old', display_name: 'v1', version: 1 }), 0);
      expect(await vaults.getCredential('owner_a', 'vlt_1', 'vcrd_old')).toMatchObject({ display_name: 'v1', version: 1 });
      await expect(vaults.updateCredential(credential({ id: 'vcrd_old', display_name: 'stale', version: 1 }), 0)).rejects.toBeInstanceOf(ConcurrencyError);
      await vaults.updateCredential(credential({ id: 'vcrd_1', display_name: 'v4', version: 4, archived_at: at(5) }), 3);
      await expect(vaults.updateCredential(credential({ id: 'vcrd_1', display_name: 'lost', version: 4 }), 3)).rejects.toBeInstanceOf(ConcurrencyError);
      await expect(vaults.updateCredential(credential({ id: 'vcrd_1', owner_id: 'owner_b', version: 5 }), 4)).rejects.toBeInstanceOf(ConcurrencyError);
      await expect(vaults.updateCredential(credential({ id: 'vcrd_1', vault_id: 'vlt_2', version: 5 }), 4)).rejects.toBeInstanceOf(ConcurrencyError);
      await expect(vaults.updateCredential(credential({ id: 'vcrd_gone', version: 1 }), 0)).rejects.toBeInstanceOf(ConcurrencyError);

      expect(await vaults.getCredential('owner_a', 'vlt_1', 'vcrd_1')).toMatchObject({ display_name: 'v4', version: 4, archived_at: at(5) });
      expect((await vaults.listCredentials('owner_a', 'vlt_1', { limit: 5 })).data.map((c) => c.id)).toEqual(['vcrd_old']);
      expect(await vaults.getCredential('owner_a', 'vlt_2', 'vcrd_1')).toBeNull();
    });

    it('finds the credentials of every owner whose refresh is due, soonest first: none archived, none in an archived vault, none not planned', async () => {
      const { vaults } = store();
      await vaults.put(vault({ id: 'vlt_1' }));
      await vaults.put(vault({ id: 'vlt_b', owner_id: 'owner_b' }));
      await vaults.put(vault({ id: 'vlt_gone', archived_at: at(2) }));
      await vaults.putCredential(refreshing('vcrd_later', at(4)));
      await vaults.putCredential(refreshing('vcrd_first', at(2)));
      await vaults.putCredential(refreshing('vcrd_theirs', at(3), { owner_id: 'owner_b', vault_id: 'vlt_b' }));
      await vaults.putCredential(refreshing('vcrd_future', at(6)));
      await vaults.putCredential(refreshing('vcrd_unplanned', null));
      await vaults.putCredential(refreshing('vcrd_archived', at(1), { archived_at: at(2) }));
      await vaults.putCredential(refreshing('vcrd_in_gone', at(1), { vault_id: 'vlt_gone' }));
      await vaults.putCredential(credential({ id: 'vcrd_bearer' }));

      expect((await vaults.refreshDue(at(5), 10)).map((c) => c.id)).toEqual(['vcrd_first', 'vcrd_theirs', 'vcrd_later']);
      expect((await vaults.refreshDue(at(5), 2)).map((c) => c.id)).toEqual(['vcrd_first', 'vcrd_theirs']);
      expect((await vaults.refreshDue(at(4), 10)).map((c) => c.id)).toEqual(['vcrd_first', 'vcrd_theirs', 'vcrd_later']);
      expect(await vaults.refreshDue(at(1), 10)).toEqual([]);

      // Refreshed: planned again later, it leaves the scan until then; what it read is what was stored.
      const first = await vaults.getCredential('owner_a', 'vlt_1', 'vcrd_first');
      if (first?.refresh == null) throw new Error('vcrd_first not stored with its refresh');
      expect(first.refresh.state.next_attempt_at).toBe(at(2));
      await vaults.updateCredential({ ...first, refresh: { ...first.refresh, state: { ...first.refresh.state, next_attempt_at: at(8) } }, version: 2 }, 1);
      expect((await vaults.refreshDue(at(5), 10)).map((c) => c.id)).toEqual(['vcrd_theirs', 'vcrd_later']);
    });

    it('deletes a vault with its credentials, and a credential alone, only for the owner', async () => {
      const { vaults } = store();
      await vaults.put(vault({ id: 'vlt_1' }));
      await vaults.putCredential(credential({ id: 'vcrd_1' }));
      await vaults.putCredential(credential({ id: 'vcrd_2' }));
      expect(await vaults.deleteCredential('owner_b', 'vlt_1', 'vcrd_1')).toBe(false);
      expect(await vaults.deleteCredential('owner_a', 'vlt_1', 'vcrd_1')).toBe(true);
      expect(await vaults.getCredential('owner_a', 'vlt_1', 'vcrd_1')).toBeNull();
      expect(await vaults.delete('owner_b', 'vlt_1')).toBe(false);
      expect(await vaults.delete('owner_a', 'vlt_1')).toBe(true);
      expect(await vaults.getCredential('owner_a', 'vlt_1', 'vcrd_2')).toBeNull();
      expect(await vaults.get('owner_a', 'vlt_1')).toBeNull();
    });
  });
}
