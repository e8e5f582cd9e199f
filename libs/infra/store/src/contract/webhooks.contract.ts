import { ConcurrencyError } from '@berth/core';
import type { WebhookDeliveryRecord } from '@berth/contracts';
import type { BerthStore, WebhookDeliveryClaim } from '@berth/ports';
import { agent, at, credential, environment, vault, webhookDelivery as delivery, webhookEndpoint as endpoint } from './fixtures';
import { REFUSED_DELIVERY_ID } from './store-contract';

/** A claim at minute `now` by `token`, leased one minute; nothing has expired unless `expiredBy` says so. */
const claimAt = (now: number, token: string, limit = 10, expiredBy = -1): WebhookDeliveryClaim => ({ now: at(now), leaseUntil: at(now + 1), token, limit, expiredBy: at(expiredBy) });

const ids = (claimed: readonly WebhookDeliveryRecord[]) => claimed.map((d) => d.id).sort();

export function webhooksContract(store: () => BerthStore): void {
  describe('webhook endpoints', () => {
    it('keeps endpoints per owner: another owner sees none, lists and counts only its own', async () => {
      const { webhookEndpoints: endpoints } = store();
      await endpoints.insert(endpoint({ id: 'whk_1', created_at: at(1) }));
      await endpoints.insert(endpoint({ id: 'whk_2', created_at: at(2), state: 'disabled' }));
      await endpoints.insert(endpoint({ id: 'whk_3', owner_id: 'owner_b' }));

      expect(await endpoints.get('owner_b', 'whk_1')).toBeNull();
      expect((await endpoints.get('owner_a', 'whk_1'))?.url).toBe('https://hooks.example.com/berth');
      expect((await endpoints.getById('whk_3'))?.owner_id).toBe('owner_b');
      expect((await endpoints.list('owner_a', { limit: 10 })).data.map((e) => e.id)).toEqual(['whk_2', 'whk_1']);
      expect((await endpoints.allOf('owner_a')).map((e) => e.id)).toEqual(['whk_1', 'whk_2']);
      expect(await endpoints.count('owner_a')).toBe(2);
      await expect(endpoints.insert(endpoint({ id: 'whk_1' }))).rejects.toBeInstanceOf(ConcurrencyError);
    });

    it('updates only from the version the writer read', async () => {
      const { webhookEndpoints: endpoints } = store();
      await endpoints.insert(endpoint({ id: 'whk_1' }));
      await endpoints.update(endpoint({ id: 'whk_1', version: 2, name: 'renamed' }), 1);
      await expect(endpoints.update(endpoint({ id: 'whk_1', version: 2, name: 'stale' }), 1)).rejects.toBeInstanceOf(ConcurrencyError);
      await expect(endpoints.update(endpoint({ id: 'whk_1', owner_id: 'owner_b', version: 3 }), 2)).rejects.toBeInstanceOf(ConcurrencyError);
      expect(await endpoints.get('owner_a', 'whk_1')).toMatchObject({ name: 'renamed', version: 2 });
    });

    it('deletes an endpoint with its deliveries, and only for its owner', async () => {
      const { webhookEndpoints: endpoints, webhookDeliveries: deliveries } = store();
      await endpoints.insert(endpoint({ id: 'whk_1' }));
      await deliveries.enqueue([delivery({ id: 'whd_1' })]);
      expect(await endpoints.delete('owner_b', 'whk_1')).toBe(false);
      expect(await endpoints.delete('owner_a', 'whk_1')).toBe(true);
      expect(await endpoints.get('owner_a', 'whk_1')).toBeNull();
      expect(await deliveries.get('owner_a', 'whk_1', 'whd_1')).toBeNull();
      expect(await endpoints.delete('owner_a', 'whk_1')).toBe(false);
    });
  });

  describe('webhook deliveries', () => {
    it('enqueues a delivery once, and shows it only to its owner and endpoint', async () => {
      const { webhookDeliveries: deliveries } = store();
      expect(await deliveries.enqueue([delivery({ id: 'whd_1' }), delivery({ id: 'whd_2', position: 2 })])).toBe(2);
      expect(await deliveries.enqueue([delivery({ id: 'whd_1', payload: 'changed' })])).toBe(0);
      expect((await deliveries.get('owner_a', 'whk_1', 'whd_1'))?.payload).toBe('{"type":"event"}');
      expect(await deliveries.get('owner_b', 'whk_1', 'whd_1')).toBeNull();
      expect(await deliveries.get('owner_a', 'whk_2', 'whd_1')).toBeNull();
      expect((await deliveries.list('owner_b', 'whk_1', { limit: 10 })).data).toEqual([]);
    });

    it('lists an endpoint’s deliveries newest first, by state, in pages', async () => {
      const { webhookDeliveries: deliveries } = store();
      await deliveries.enqueue([
        delivery({ id: 'whd_1', created_at: at(1) }),
        delivery({ id: 'whd_2', created_at: at(2), state: 'delivered', next_attempt_at: null }),
        delivery({ id: 'whd_3', created_at: at(3) }),
      ]);
      const first = await deliveries.list('owner_a', 'whk_1', { limit: 2 });
      expect(first.data.map((d) => d.id)).toEqual(['whd_3', 'whd_2']);
      const second = await deliveries.list('owner_a', 'whk_1', { limit: 2, page: first.next_page });
      expect(second.data.map((d) => d.id)).toEqual(['whd_1']);
      expect(second.next_page).toBeNull();
      expect((await deliveries.list('owner_a', 'whk_1', { limit: 10, state: 'delivered' })).data.map((d) => d.id)).toEqual(['whd_2']);
    });

    it('claims due deliveries in order per endpoint and subject, one lease at a time', async () => {
      const { webhookEndpoints: endpoints, webhookDeliveries: deliveries } = store();
      await endpoints.insert(endpoint({ id: 'whk_1' }));
      await endpoints.insert(endpoint({ id: 'whk_2' }));
      await deliveries.enqueue([
        delivery({ id: 'whd_a1', position: 1, subject: 'sesn_a' }),
        delivery({ id: 'whd_a2', position: 2, subject: 'sesn_a' }),
        delivery({ id: 'whd_b1', position: 1, subject: 'sesn_b', next_attempt_at: at(30) }),
        delivery({ id: 'whd_b2', position: 2, subject: 'sesn_b' }),
        delivery({ id: 'whd_x', position: 0, subject: null }),
        delivery({ id: 'whd_other_endpoint', endpoint_id: 'whk_2', position: 5, subject: 'sesn_a' }),
      ]);
      const claimed = await deliveries.claimDue(claimAt(10, 'worker-1'));
      // a2 waits for a1; b2 waits for b1, which is not due yet.
      expect(ids(claimed)).toEqual(['whd_a1', 'whd_other_endpoint', 'whd_x']);
      expect(claimed.every((d) => d.lease?.token === 'worker-1')).toBe(true);
      expect(await deliveries.claimDue(claimAt(10, 'worker-2'))).toEqual([]);

      const a1 = claimed.find((d) => d.id === 'whd_a1') as WebhookDeliveryRecord;
      const done = { ...a1, state: 'delivered' as const, next_attempt_at: null, delivered_at: at(10), attempt_count: 1 };
      expect(await deliveries.settle(done, 'worker-2')).toBe(false);
      expect(await deliveries.settle(done, 'worker-1')).toBe(true);
      expect(await deliveries.get('owner_a', 'whk_1', 'whd_a1')).toMatchObject({ state: 'delivered', lease: null, attempt_count: 1 });
      expect(ids(await deliveries.claimDue(claimAt(10, 'worker-2')))).toEqual(['whd_a2']);
    });

    it('gives a crashed worker’s deliveries to another worker once the lease ran out', async () => {
      const { webhookEndpoints: endpoints, webhookDeliveries: deliveries } = store();
      await endpoints.insert(endpoint({ id: 'whk_1' }));
      await deliveries.enqueue([delivery({ id: 'whd_1' })]);
      expect(await deliveries.claimDue(claimAt(1, 'crashed', 5))).toHaveLength(1);
      expect(await deliveries.claimDue(claimAt(1, 'next', 5))).toHaveLength(0);
      const again = await deliveries.claimDue(claimAt(2, 'next', 5));
      expect(again.map((d) => d.lease?.token)).toEqual(['next']);
      expect(await deliveries.settle({ ...(again[0] as WebhookDeliveryRecord), state: 'failed' }, 'crashed')).toBe(false);
    });

    it('never hands one delivery to two racing workers', async () => {
      const { webhookEndpoints: endpoints, webhookDeliveries: deliveries } = store();
      await endpoints.insert(endpoint({ id: 'whk_1' }));
      await deliveries.enqueue(Array.from({ length: 6 }, (_, i) => delivery({ id: `whd_${i}`, subject: null })));
      const claims = await Promise.all(['w1', 'w2', 'w3'].map((w) => deliveries.claimDue(claimAt(5, w, 6))));
      expect(ids(claims.flat())).toEqual(Array.from({ length: 6 }, (_, i) => `whd_${i}`).sort());
    });

    it('holds a disabled endpoint’s deliveries (they stay pending) and claims them once it is enabled again', async () => {
      const { webhookEndpoints: endpoints, webhookDeliveries: deliveries } = store();
      await endpoints.insert(endpoint({ id: 'whk_1', state: 'disabled', disabled_reason: 'consecutive_failures' }));
      await deliveries.enqueue([delivery({ id: 'whd_1', position: 1 }), delivery({ id: 'whd_2', position: 2 })]);
      expect(await deliveries.claimDue(claimAt(10, 'w1'))).toEqual([]);
      await endpoints.update(endpoint({ id: 'whk_1', version: 2 }), 1);
      expect(ids(await deliveries.claimDue(claimAt(10, 'w1')))).toEqual(['whd_1']);
    });

    it('sends nothing to a failing endpoint before its next retry, then one delivery at a time across subjects and workers until it is settled', async () => {
      const { webhookEndpoints: endpoints, webhookDeliveries: deliveries } = store();
      await endpoints.insert(endpoint({ id: 'whk_1', failing_since: at(1), consecutive_failures: 3, next_retry_at: at(20) }));
      await endpoints.insert(endpoint({ id: 'whk_2' }));
      await deliveries.enqueue([
        delivery({ id: 'whd_a', subject: 'sesn_a' }),
        delivery({ id: 'whd_b', subject: 'sesn_b' }),
        delivery({ id: 'whd_c', subject: null }),
        delivery({ id: 'whd_healthy', endpoint_id: 'whk_2', subject: 'sesn_a' }),
      ]);
      const healthy = await deliveries.claimDue(claimAt(19, 'w1'));
      expect(ids(healthy)).toEqual(['whd_healthy']);
      await deliveries.settle({ ...(healthy[0] as WebhookDeliveryRecord), state: 'delivered', next_attempt_at: null }, 'w1');
      const probe = await deliveries.claimDue(claimAt(20, 'w1'));
      expect(probe).toHaveLength(1);
      expect(await deliveries.claimDue(claimAt(20, 'w2'))).toEqual([]);
      // The probe failed and was settled: the next one may go (the worker pushes next_retry_at out in between).
      expect(await deliveries.settle(probe[0] as WebhookDeliveryRecord, 'w1')).toBe(true);
      const next = await deliveries.claimDue(claimAt(20, 'w2'));
      expect(next).toHaveLength(1);
      // A worker that died with the probe gives it back when the lease runs out.
      expect(await deliveries.claimDue(claimAt(20, 'w3'))).toEqual([]);
      expect(await deliveries.claimDue(claimAt(21, 'w3'))).toHaveLength(1);
    });

    it('claims expired deliveries whatever holds them back (a disabled or backing-off endpoint, an earlier delivery, a later retry), for the worker to fail them', async () => {
      const { webhookEndpoints: endpoints, webhookDeliveries: deliveries } = store();
      await endpoints.insert(endpoint({ id: 'whk_1', state: 'disabled' }));
      await endpoints.insert(endpoint({ id: 'whk_2', failing_since: at(1), consecutive_failures: 9, next_retry_at: at(90) }));
      await deliveries.enqueue([
        delivery({ id: 'whd_old_1', position: 1, created_at: at(1) }),
        delivery({ id: 'whd_old_2', position: 2, created_at: at(2), next_attempt_at: at(80) }),
        delivery({ id: 'whd_young', position: 3, created_at: at(5) }),
        delivery({ id: 'whd_old_failing_1', endpoint_id: 'whk_2', position: 1, created_at: at(1) }),
        delivery({ id: 'whd_old_failing_2', endpoint_id: 'whk_2', position: 2, created_at: at(2) }),
      ]);
      expect(ids(await deliveries.claimDue(claimAt(10, 'w1', 10, 2)))).toEqual(['whd_old_1', 'whd_old_2', 'whd_old_failing_1', 'whd_old_failing_2']);
    });

    it('prunes settled deliveries older than the cut-off, never pending ones', async () => {
      const { webhookDeliveries: deliveries } = store();
      await deliveries.enqueue([
        delivery({ id: 'whd_old_done', created_at: at(1), state: 'delivered' }),
        delivery({ id: 'whd_old_failed', created_at: at(1), state: 'failed' }),
        delivery({ id: 'whd_old_pending', created_at: at(1) }),
        delivery({ id: 'whd_new_done', created_at: at(9), state: 'delivered' }),
      ]);
      expect(await deliveries.prune(at(5))).toBe(2);
      expect((await deliveries.list('owner_a', 'whk_1', { limit: 10 })).data.map((d) => d.id).sort()).toEqual(['whd_new_done', 'whd_old_pending']);
    });
  });

  describe('configuration changes with their webhook deliveries (one write)', () => {
    const hook = (id: string) => [delivery({ id, subject: null })];
    const stored = async (...wanted: string[]) => {
      const { webhookDeliveries: deliveries } = store();
      const found = await Promise.all(wanted.map((id) => deliveries.get('owner_a', 'whk_1', id)));
      return wanted.filter((_, i) => found[i] !== null);
    };

    it('stores each change’s deliveries with it, and none for a change that did not happen', async () => {
      const { agents, environments, vaults } = store();
      await agents.putVersion(agent({ id: 'agent_1', version: 1 }), 0, hook('whd_agent_created'));
      await expect(agents.putVersion(agent({ id: 'agent_1', version: 1 }), 0, hook('whd_agent_conflict'))).rejects.toBeInstanceOf(ConcurrencyError);
      await agents.archive('owner_a', 'agent_1', at(5), hook('whd_agent_archived'));
      await agents.archive('owner_a', 'agent_1', at(6), hook('whd_agent_archived_again'));
      await environments.put(environment({ id: 'env_1' }), hook('whd_env'));
      await environments.put(environment({ id: 'env_1', owner_id: 'owner_b' }), hook('whd_env_other_owner'));
      await environments.insert(environment({ id: 'env_2' }), hook('whd_env_inserted'));
      await expect(environments.insert(environment({ id: 'env_2' }), hook('whd_env_insert_conflict'))).rejects.toBeInstanceOf(ConcurrencyError);
      await vaults.put(vault({ id: 'vlt_1' }), hook('whd_vault'));
      await vaults.putCredential(credential({ id: 'vcrd_1' }), hook('whd_credential'));
      await vaults.updateCredential(credential({ id: 'vcrd_1', version: 1 }), 0, hook('whd_credential_updated'));
      await expect(vaults.updateCredential(credential({ id: 'vcrd_1', version: 1 }), 0, hook('whd_credential_stale'))).rejects.toBeInstanceOf(ConcurrencyError);
      expect(await vaults.deleteCredential('owner_a', 'vlt_1', 'vcrd_1', hook('whd_credential_deleted'))).toBe(true);
      expect(await vaults.deleteCredential('owner_a', 'vlt_1', 'vcrd_1', hook('whd_credential_gone'))).toBe(false);
      expect(await vaults.delete('owner_a', 'vlt_1', hook('whd_vault_deleted'))).toBe(true);
      expect(await vaults.delete('owner_a', 'vlt_1', hook('whd_vault_gone'))).toBe(false);

      expect(await stored('whd_agent_created', 'whd_agent_conflict', 'whd_agent_archived', 'whd_agent_archived_again', 'whd_env', 'whd_env_other_owner', 'whd_env_inserted', 'whd_env_insert_conflict')).toEqual([
        'whd_agent_created',
        'whd_agent_archived',
        'whd_env',
        'whd_env_inserted',
      ]);
      expect(await stored('whd_vault', 'whd_credential', 'whd_credential_updated', 'whd_credential_stale', 'whd_credential_deleted', 'whd_credential_gone', 'whd_vault_deleted', 'whd_vault_gone')).toEqual([
        'whd_vault',
        'whd_credential',
        'whd_credential_updated',
        'whd_credential_deleted',
        'whd_vault_deleted',
      ]);
    });

    it('when the deliveries cannot be written, the change is not stored either: no crash between the two can lose a webhook', async () => {
      const { agents, environments, vaults } = store();
      await vaults.put(vault({ id: 'vlt_keep' }));
      await vaults.putCredential(credential({ id: 'vcrd_keep', vault_id: 'vlt_keep' }));
      // The store refuses the second write (this delivery); the first must go with it.
      const refused = [...hook('whd_ok'), ...hook(REFUSED_DELIVERY_ID)];
      // Whatever the store throws (its own error type, from its driver's realm), the write is refused.
      const outcome = (write: Promise<unknown>) => write.then(() => 'stored', () => 'refused');
      expect(await outcome(agents.putVersion(agent({ id: 'agent_1', version: 1 }), 0, refused))).toBe('refused');
      expect(await outcome(environments.put(environment({ id: 'env_1' }), refused))).toBe('refused');
      expect(await outcome(vaults.put(vault({ id: 'vlt_1' }), refused))).toBe('refused');
      expect(await outcome(vaults.updateCredential(credential({ id: 'vcrd_keep', vault_id: 'vlt_keep', display_name: 'changed', version: 1 }), 0, refused))).toBe('refused');
      expect(await outcome(vaults.delete('owner_a', 'vlt_keep', refused))).toBe('refused');

      expect(await agents.get('owner_a', 'agent_1')).toBeNull();
      expect(await environments.get('owner_a', 'env_1')).toBeNull();
      expect(await vaults.get('owner_a', 'vlt_1')).toBeNull();
      expect(await vaults.get('owner_a', 'vlt_keep')).not.toBeNull();
      expect(await vaults.getCredential('owner_a', 'vlt_keep', 'vcrd_keep')).toMatchObject({ display_name: null });
      expect(await stored('whd_ok')).toEqual([]);
      // Written again (the request retried), change and delivery land together.
      await agents.putVersion(agent({ id: 'agent_1', version: 1 }), 0, hook('whd_ok'));
      expect(await agents.get('owner_a', 'agent_1')).not.toBeNull();
      expect(await stored('whd_ok')).toEqual(['whd_ok']);
    });
  });
}
