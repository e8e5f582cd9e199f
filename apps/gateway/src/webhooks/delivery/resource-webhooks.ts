import type { WebhookEndpointStore, WebhookOutbox } from '@berth/ports';
import { planDeliveries, resourceWebhookEvent, type ResourceChange } from '@berth/webhooks-domain';

export type ResourceWebhooksDeps = Readonly<{
  endpoints: Pick<WebhookEndpointStore, 'allOf'>;
  now: () => string;
}>;

/**
 * Agent, environment and vault changes are written straight to the store (no session stream), so
 * the service making one plans its webhook deliveries first and hands them to the store write of
 * the change, which stores both atomically (WebhookOutbox): a gateway dying at any point loses
 * neither, and a change that fails or changes nothing sends nothing. The owner's subscribed
 * endpoints only. A store that cannot be read fails the request, as the write would.
 */
export class ResourceWebhooks {
  constructor(private readonly d: ResourceWebhooksDeps) {}

  async plan(change: ResourceChange): Promise<WebhookOutbox> {
    const endpoints = await this.d.endpoints.allOf(change.ownerId);
    return planDeliveries([resourceWebhookEvent(change)], endpoints, this.d.now());
  }
}
