import type { Logger, WebhookDeliveryStore, WebhookEndpointStore } from '@berth/ports';
import { planDeliveries, resourceWebhookEvent, type ResourceChange } from '@berth/webhooks-domain';

export type ResourceWebhooksDeps = Readonly<{
  endpoints: Pick<WebhookEndpointStore, 'enabledOf'>;
  deliveries: Pick<WebhookDeliveryStore, 'enqueue'>;
  now: () => string;
  log: Logger;
}>;

/**
 * Agent, environment and vault changes are written straight to the store (no session stream), so
 * the service that wrote one plans its webhook deliveries right after, into the same durable
 * outbox the delivery worker sends session events from: the owner's subscribed endpoints only.
 * Planning never fails the request that made the change; a failure is logged (the change stays).
 */
export class ResourceWebhooks {
  constructor(private readonly d: ResourceWebhooksDeps) {}

  async changed(change: ResourceChange): Promise<void> {
    try {
      const endpoints = await this.d.endpoints.enabledOf(change.ownerId);
      if (endpoints.length === 0) return;
      await this.d.deliveries.enqueue(planDeliveries([resourceWebhookEvent(change)], endpoints, this.d.now()));
    } catch (error) {
      this.d.log.error('webhook deliveries of a change were not planned', { type: change.type, id: change.id, owner_id: change.ownerId, err: error });
    }
  }
}
