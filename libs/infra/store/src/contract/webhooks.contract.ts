import { ConcurrencyError } from '@berth/core';
import type { WebhookDeliveryRecord, WebhookEndpointRecord } from '@berth/contracts';
import type { BerthStore } from '@berth/ports';
import { at } from './fixtures';

const sealed = { key_id: 'k1', iv: 'aXY=', ciphertext: 'Y3Q=', tag: 'dGFn' };

const endpoint = (over: Partial<WebhookEndpointRecord> & { id: string }): WebhookEndpointRecord => ({
  owner_id: 'owner_a',
  url: 'https://hooks.example.com/berth',
  name: '',
  description: '',
  enabled_events: ['session.status_idled'],
  state: 'enabled',
  disabled_reason: '',
  secret: sealed,
  consecutive_failures: 0,
  version: 1,
  created_at: at(1),
  updated_at: at(1),
  ...over,
});

const delivery = (over: Partial<WebhookDeliveryRecord> & { id: string }): WebhookDeliveryRecord => ({
  owner_id: 'owner_a',
  endpoint_id: 'whk_1',
  event_id: `wevt_${over.id}`,
  event_type: 'session.status_idled',
  subject: 'sesn_1',
  position: 1,
  payload: '{"type":"event"}',
  state: 'pending',
  attempt_count: 0,
  attempts: [],
  next_attempt_at: at(0),
  delivered_at: null,
  created_at: at(0),
  redelivery_of: null,
  lease: null,
  ...over,
});

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
      expect((await endpoints.enabledOf('owner_a')).map((e) => e.id)).toEqual(['whk_1']);
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
      const { webhookDeliveries: deliveries } = store();
      await deliveries.enqueue([
        delivery({ id: 'whd_a1', position: 1, subject: 'sesn_a' }),
        delivery({ id: 'whd_a2', position: 2, subject: 'sesn_a' }),
        delivery({ id: 'whd_b1', position: 1, subject: 'sesn_b', next_attempt_at: at(30) }),
        delivery({ id: 'whd_b2', position: 2, subject: 'sesn_b' }),
        delivery({ id: 'whd_x', position: 0, subject: null }),
        delivery({ id: 'whd_other_endpoint', endpoint_id: 'whk_2', position: 5, subject: 'sesn_a' }),
      ]);
      const now = at(10);
      const claimed = await deliveries.claimDue(now, at(11), 'worker-1', 10);
      // a2 waits for a1; b2 waits for b1, which is not due yet.
      expect(claimed.map((d) => d.id).sort()).toEqual(['whd_a1', 'whd_other_endpoint', 'whd_x']);
      expect(claimed.every((d) => d.lease?.token === 'worker-1')).toBe(true);
      expect(await deliveries.claimDue(now, at(11), 'worker-2', 10)).toEqual([]);

      const a1 = claimed.find((d) => d.id === 'whd_a1') as WebhookDeliveryRecord;
      expect(await deliveries.settle({ ...a1, state: 'delivered', next_attempt_at: null, delivered_at: now, attempt_count: 1 }, 'worker-2')).toBe(false);
      expect(await deliveries.settle({ ...a1, state: 'delivered', next_attempt_at: null, delivered_at: now, attempt_count: 1 }, 'worker-1')).toBe(true);
      expect(await deliveries.get('owner_a', 'whk_1', 'whd_a1')).toMatchObject({ state: 'delivered', lease: null, attempt_count: 1 });
      expect((await deliveries.claimDue(now, at(11), 'worker-2', 10)).map((d) => d.id)).toEqual(['whd_a2']);
    });

    it('gives a crashed worker’s deliveries to another worker once the lease ran out', async () => {
      const { webhookDeliveries: deliveries } = store();
      await deliveries.enqueue([delivery({ id: 'whd_1' })]);
      expect(await deliveries.claimDue(at(1), at(2), 'crashed', 5)).toHaveLength(1);
      expect(await deliveries.claimDue(at(1), at(3), 'next', 5)).toHaveLength(0);
      const again = await deliveries.claimDue(at(2), at(3), 'next', 5);
      expect(again.map((d) => d.lease?.token)).toEqual(['next']);
      expect(await deliveries.settle({ ...(again[0] as WebhookDeliveryRecord), state: 'failed' }, 'crashed')).toBe(false);
    });

    it('never hands one delivery to two racing workers', async () => {
      const { webhookDeliveries: deliveries } = store();
      await deliveries.enqueue(Array.from({ length: 6 }, (_, i) => delivery({ id: `whd_${i}`, subject: null })));
      const claims = await Promise.all(['w1', 'w2', 'w3'].map((w) => deliveries.claimDue(at(5), at(6), w, 6)));
      const ids = claims.flat().map((d) => d.id);
      expect(ids.sort()).toEqual(Array.from({ length: 6 }, (_, i) => `whd_${i}`).sort());
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
}
