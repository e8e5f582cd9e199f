import type { BerthStore } from '@berth/ports';
import { at, credential, vault } from './fixtures';

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
