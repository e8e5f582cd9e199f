import { ConcurrencyError } from '@berth/core';
import type { ApiKeyRecord, BerthStore, IdempotencyRecord, NatsCredentialRecord } from '@berth/ports';
import { at } from './fixtures';

const claimOf = (over: Partial<IdempotencyRecord>): IdempotencyRecord => ({
  owner_id: 'owner_a',
  key: 'key-1',
  subject: 'POST /v1/sessions',
  session_id: 'sesn_1',
  created_at: at(1),
  ...over,
});

const keyOf = (over: Partial<ApiKeyRecord> & { id: string; prefix: string }): ApiKeyRecord => ({
  owner_id: 'owner_a',
  hash: `sha256:${over.id}`,
  name: `key ${over.id}`,
  created_at: at(1),
  revoked_at: null,
  ...over,
});

const credentialOf = (over: Partial<NatsCredentialRecord> & { id: string }): NatsCredentialRecord => ({
  owner_id: 'owner_a',
  name: `credential ${over.id}`,
  public_key: `U${over.id.toUpperCase()}`,
  created_at: at(1),
  revoked_at: null,
  ...over,
});

export function keysContract(store: () => BerthStore): void {
  describe('idempotency keys', () => {
    it('gives both racing claims of one key the record of whichever claimed first', async () => {
      const { idempotency } = store();
      const [first, second] = await Promise.all([
        idempotency.claim(claimOf({ session_id: 'sesn_1' })),
        idempotency.claim(claimOf({ session_id: 'sesn_2', created_at: at(2) })),
      ]);
      expect(second).toEqual(first);
      expect(['sesn_1', 'sesn_2']).toContain(first.session_id);
      expect(await idempotency.get('owner_a', 'key-1')).toEqual(first);

      const later = await idempotency.claim(claimOf({ session_id: 'sesn_3', created_at: at(3) }));
      expect(later).toEqual(first);
    });

    it('scopes keys to their owner', async () => {
      const { idempotency } = store();
      await idempotency.claim(claimOf({ session_id: 'sesn_1' }));
      const other = await idempotency.claim(claimOf({ owner_id: 'owner_b', session_id: 'sesn_9' }));
      expect(other.session_id).toBe('sesn_9');
      expect(await idempotency.get('owner_a', 'key-2')).toBeNull();
      expect((await idempotency.get('owner_a', 'key-1'))?.session_id).toBe('sesn_1');
    });
  });

  describe('api keys', () => {
    it('finds a key by its public prefix and lists only the owner’s keys', async () => {
      const { apiKeys } = store();
      const a1 = keyOf({ id: 'key_1', prefix: 'bk_live_aaaa1111', created_at: at(1) });
      const a2 = keyOf({ id: 'key_2', prefix: 'bk_live_aaaa2222', created_at: at(2) });
      const b1 = keyOf({ id: 'key_3', prefix: 'bk_live_bbbb1111', owner_id: 'owner_b' });
      for (const k of [a1, a2, b1]) await apiKeys.insert(k);

      expect(await apiKeys.byPrefix('bk_live_aaaa2222')).toEqual(a2);
      expect(await apiKeys.byPrefix('bk_live_nope')).toBeNull();
      expect(await apiKeys.list('owner_a')).toEqual([a1, a2]);
      expect(await apiKeys.list('owner_b')).toEqual([b1]);
      expect(await apiKeys.list('owner_c')).toEqual([]);
      await expect(apiKeys.insert(keyOf({ id: 'key_4', prefix: 'bk_live_aaaa1111' }))).rejects.toBeInstanceOf(ConcurrencyError);
    });

    it('revokes only the owner’s key, keeping the first revocation time', async () => {
      const { apiKeys } = store();
      await apiKeys.insert(keyOf({ id: 'key_1', prefix: 'bk_live_aaaa1111' }));

      expect(await apiKeys.revoke('owner_b', 'key_1', at(5))).toBe(false);
      expect((await apiKeys.byPrefix('bk_live_aaaa1111'))?.revoked_at).toBeNull();

      expect(await apiKeys.revoke('owner_a', 'key_1', at(6))).toBe(true);
      expect(await apiKeys.revoke('owner_a', 'key_1', at(7))).toBe(true);
      expect((await apiKeys.byPrefix('bk_live_aaaa1111'))?.revoked_at).toBe(at(6));
      expect(await apiKeys.revoke('owner_a', 'key_missing', at(8))).toBe(false);
    });
  });

  describe('nats credentials', () => {
    it('lists only the owner’s credentials, in creation order, and refuses a key stored twice', async () => {
      const { natsCredentials } = store();
      const a1 = credentialOf({ id: 'ncred_1', created_at: at(1) });
      const a2 = credentialOf({ id: 'ncred_2', created_at: at(2) });
      const b1 = credentialOf({ id: 'ncred_3', owner_id: 'owner_b' });
      for (const c of [a2, b1, a1]) await natsCredentials.insert(c);

      expect(await natsCredentials.list('owner_a')).toEqual([a1, a2]);
      expect(await natsCredentials.list('owner_b')).toEqual([b1]);
      expect(await natsCredentials.list('owner_c')).toEqual([]);
      await expect(natsCredentials.insert(credentialOf({ id: 'ncred_4', public_key: a1.public_key }))).rejects.toBeInstanceOf(ConcurrencyError);
    });

    it('revokes only the owner’s credential, keeps the first time, and lists every owner’s revoked ones', async () => {
      const { natsCredentials } = store();
      await natsCredentials.insert(credentialOf({ id: 'ncred_1' }));
      await natsCredentials.insert(credentialOf({ id: 'ncred_2', owner_id: 'owner_b' }));
      await natsCredentials.insert(credentialOf({ id: 'ncred_3' }));

      expect(await natsCredentials.revoke('owner_b', 'ncred_1', at(5))).toBeNull();
      expect(await natsCredentials.revoked()).toEqual([]);
      expect((await natsCredentials.revoke('owner_a', 'ncred_1', at(6)))?.revoked_at).toBe(at(6));
      expect((await natsCredentials.revoke('owner_a', 'ncred_1', at(7)))?.revoked_at).toBe(at(6));
      expect((await natsCredentials.revoke('owner_b', 'ncred_2', at(8)))?.revoked_at).toBe(at(8));
      expect(await natsCredentials.revoke('owner_a', 'ncred_missing', at(9))).toBeNull();

      expect((await natsCredentials.revoked()).map((c) => [c.id, c.revoked_at])).toEqual([
        ['ncred_1', at(6)],
        ['ncred_2', at(8)],
      ]);
      expect((await natsCredentials.list('owner_a')).map((c) => c.revoked_at)).toEqual([at(6), null]);
    });
  });
}
