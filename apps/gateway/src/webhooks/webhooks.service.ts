import { randomBytes } from 'node:crypto';
import { BerthError, ConcurrencyError, IllegalStateError, NotFoundError, type Clock, type IdGenerator } from '@berth/core';
import type { WebhookEndpointCreateParams, WebhookEndpointRecord, WebhookEndpointUpdateParams } from '@berth/contracts';
import type { SecretBox, WebhookDeliveryStore, WebhookEndpointStore } from '@berth/ports';
import { redeliveryOf, signingSecretFrom, urlRefusal, type TargetPolicy } from '@berth/webhooks-domain';
import { DEFAULT_PAGE_LIMIT } from '../http/schemas';
import type { RouteInput } from '../http/route';
import { renderWebhookDelivery, renderWebhookEndpoint } from './webhook.render';
import type { WebhookRoutes } from './webhooks.schemas';

/** An owner may keep this many endpoints (as many as a Managed Agents organization). */
export const MAX_WEBHOOK_ENDPOINTS = 32;

const notFound = () => new NotFoundError('webhook endpoint not found', 'WEBHOOK_NOT_FOUND');

/** No failure counted: deliveries go out at once. */
const ANSWERING = { consecutive_failures: 0, failing_since: null, next_retry_at: null } as const;

export type WebhooksServiceDeps = Readonly<{
  endpoints: WebhookEndpointStore;
  deliveries: WebhookDeliveryStore;
  secrets: SecretBox;
  clock: Clock;
  ids: IdGenerator;
  targets: TargetPolicy;
}>;

/**
 * Webhook endpoints are configuration, written straight to the store. The signing secret is drawn
 * here, sealed at rest (bound to the endpoint id) and answered once; the delivery worker opens it
 * to sign. Writes compare-and-set on the endpoint's version, because the worker writes it too
 * (failure streak and backoff, automatic disable).
 */
export class WebhooksService {
  constructor(private readonly d: WebhooksServiceDeps) {}

  async create(owner: string, body: WebhookEndpointCreateParams) {
    if ((await this.d.endpoints.count(owner)) >= MAX_WEBHOOK_ENDPOINTS) {
      throw new IllegalStateError('WEBHOOK_LIMIT_REACHED', `an owner can have at most ${MAX_WEBHOOK_ENDPOINTS} webhook endpoints; delete one first`);
    }
    this.checkTarget(body.url);
    const now = this.now();
    const id = this.d.ids.next('whk');
    const secret = signingSecretFrom(randomBytes(32));
    const endpoint: WebhookEndpointRecord = {
      id,
      owner_id: owner,
      url: body.url,
      name: body.name ?? '',
      description: body.description ?? '',
      enabled_events: body.enabled_events,
      state: 'enabled',
      disabled_reason: '',
      secret: this.d.secrets.seal(secret, id),
      ...ANSWERING,
      version: 1,
      created_at: now,
      updated_at: now,
    };
    await this.d.endpoints.insert(endpoint);
    return { ...renderWebhookEndpoint(endpoint), signing_secret: secret };
  }

  async list(owner: string, query: RouteInput<typeof WebhookRoutes.list>['query']) {
    const page = await this.d.endpoints.list(owner, { limit: query.limit ?? DEFAULT_PAGE_LIMIT, page: query.page ?? null, order: query.order });
    return { data: page.data.map(renderWebhookEndpoint), next_page: page.next_page };
  }

  async get(owner: string, id: string) {
    return renderWebhookEndpoint(await this.find(owner, id));
  }

  async update(owner: string, id: string, body: WebhookEndpointUpdateParams) {
    if (body.url) this.checkTarget(body.url);
    const updated = await this.change(owner, id, (e) => ({
      url: body.url ?? e.url,
      name: body.name ?? e.name,
      description: body.description ?? e.description,
      enabled_events: body.enabled_events && body.enabled_events.length > 0 ? body.enabled_events : e.enabled_events,
      // A new URL, or enabling again, is tried at once: the failure streak (and an automatic reason) is cleared.
      ...(body.url && body.url !== e.url ? ANSWERING : {}),
      ...(body.state === 'enabled' ? { state: 'enabled', disabled_reason: '', ...ANSWERING } : {}),
      ...(body.state === 'disabled' && e.state === 'enabled' ? { state: 'disabled', disabled_reason: '' } : {}),
    }));
    return renderWebhookEndpoint(updated);
  }

  async delete(owner: string, id: string) {
    if (!(await this.d.endpoints.delete(owner, id))) throw notFound();
    return { id, type: 'webhook_endpoint_deleted' };
  }

  async regenerateSecret(owner: string, id: string) {
    const secret = signingSecretFrom(randomBytes(32));
    await this.change(owner, id, () => ({ secret: this.d.secrets.seal(secret, id) }));
    return { signing_secret: secret };
  }

  async deliveries(owner: string, id: string, query: RouteInput<typeof WebhookRoutes.deliveries>['query']) {
    await this.find(owner, id);
    const page = await this.d.deliveries.list(owner, id, { limit: query.limit ?? DEFAULT_PAGE_LIMIT, page: query.page ?? null, order: query.order, state: query.state });
    return { data: page.data.map(renderWebhookDelivery), next_page: page.next_page };
  }

  async delivery(owner: string, id: string, deliveryId: string) {
    await this.find(owner, id);
    const delivery = await this.d.deliveries.get(owner, id, deliveryId);
    if (!delivery) throw new NotFoundError('webhook delivery not found', 'WEBHOOK_DELIVERY_NOT_FOUND');
    return renderWebhookDelivery(delivery);
  }

  async redeliver(owner: string, id: string, deliveryId: string) {
    const endpoint = await this.find(owner, id);
    const original = await this.d.deliveries.get(owner, id, deliveryId);
    if (!original) throw new NotFoundError('webhook delivery not found', 'WEBHOOK_DELIVERY_NOT_FOUND');
    if (endpoint.state !== 'enabled') throw new IllegalStateError('WEBHOOK_DISABLED', 'the endpoint is disabled: enable it before redelivering');
    if (original.state === 'pending') throw new IllegalStateError('WEBHOOK_DELIVERY_PENDING', 'this delivery is still being attempted');
    const again = redeliveryOf(original, this.d.ids.next('whd'), this.now());
    await this.d.deliveries.enqueue([again]);
    return renderWebhookDelivery(again);
  }

  /** A URL naming the platform's own network is refused up front; names are checked again on every connection. */
  private checkTarget(url: string): void {
    const refusal = urlRefusal(url, this.d.targets);
    if (refusal) throw new BerthError('WEBHOOK_TARGET_NOT_ALLOWED', 400, `url: ${refusal}; webhooks go to public addresses only (the operator can allow private ones with BERTH_WEBHOOK_ALLOW_PRIVATE_TARGETS=true)`, { field: 'url' });
  }

  private async find(owner: string, id: string): Promise<WebhookEndpointRecord> {
    const endpoint = await this.d.endpoints.get(owner, id);
    if (!endpoint) throw notFound();
    return endpoint;
  }

  /** Applies a change on the latest version; a racing write by the delivery worker is retried on fresh state. */
  private async change(owner: string, id: string, change: (e: WebhookEndpointRecord) => Partial<WebhookEndpointRecord>): Promise<WebhookEndpointRecord> {
    for (let attempt = 0; ; attempt++) {
      const current = await this.find(owner, id);
      const next: WebhookEndpointRecord = { ...current, ...change(current), version: current.version + 1, updated_at: this.now() };
      try {
        await this.d.endpoints.update(next, current.version);
        return next;
      } catch (e) {
        if (!(e instanceof ConcurrencyError) || attempt >= 4) throw e;
      }
    }
  }

  private now(): string {
    return this.d.clock.now().toISOString();
  }
}
