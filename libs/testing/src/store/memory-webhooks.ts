import { ConcurrencyError } from '@berth/core';
import type { WebhookDeliveryRecord, WebhookEndpointRecord } from '@berth/contracts';
import type { Page, PageQuery, WebhookDeliveryListQuery, WebhookDeliveryStore, WebhookEndpointStore } from '@berth/ports';
import { pageRows } from './paging';

/** Endpoints and deliveries share one object so deleting an endpoint removes its deliveries, as the real adapters do. */
export class MemoryWebhooks {
  readonly endpoints = new Map<string, WebhookEndpointRecord>();
  readonly deliveries = new Map<string, WebhookDeliveryRecord>();
}

export class MemoryWebhookEndpoints implements WebhookEndpointStore {
  constructor(private readonly m: MemoryWebhooks) {}

  async insert(endpoint: WebhookEndpointRecord): Promise<void> {
    if (this.m.endpoints.has(endpoint.id)) throw new ConcurrencyError(`webhook endpoint ${endpoint.id} already exists`);
    this.m.endpoints.set(endpoint.id, structuredClone(endpoint));
  }

  async get(ownerId: string, id: string): Promise<WebhookEndpointRecord | null> {
    const e = this.m.endpoints.get(id);
    return e && e.owner_id === ownerId ? structuredClone(e) : null;
  }

  async getById(id: string): Promise<WebhookEndpointRecord | null> {
    const e = this.m.endpoints.get(id);
    return e ? structuredClone(e) : null;
  }

  async list(ownerId: string, query: PageQuery): Promise<Page<WebhookEndpointRecord>> {
    const rows = [...this.m.endpoints.values()].filter((e) => e.owner_id === ownerId);
    return structuredClone(pageRows('webhooks', rows, query, (e) => [e.created_at, e.id]));
  }

  async enabledOf(ownerId: string): Promise<readonly WebhookEndpointRecord[]> {
    const rows = [...this.m.endpoints.values()].filter((e) => e.owner_id === ownerId && e.state === 'enabled');
    return structuredClone(rows.sort((a, b) => (a.created_at + a.id < b.created_at + b.id ? -1 : 1)));
  }

  async count(ownerId: string): Promise<number> {
    return [...this.m.endpoints.values()].filter((e) => e.owner_id === ownerId).length;
  }

  async update(endpoint: WebhookEndpointRecord, expectedVersion: number): Promise<void> {
    const stored = this.m.endpoints.get(endpoint.id);
    if (!stored || stored.owner_id !== endpoint.owner_id || stored.version !== expectedVersion) {
      throw new ConcurrencyError(`webhook endpoint ${endpoint.id} is not at version ${expectedVersion}`);
    }
    this.m.endpoints.set(endpoint.id, structuredClone(endpoint));
  }

  async delete(ownerId: string, id: string): Promise<boolean> {
    const stored = this.m.endpoints.get(id);
    if (!stored || stored.owner_id !== ownerId) return false;
    this.m.endpoints.delete(id);
    for (const [key, d] of this.m.deliveries) if (d.endpoint_id === id) this.m.deliveries.delete(key);
    return true;
  }
}

export class MemoryWebhookDeliveries implements WebhookDeliveryStore {
  constructor(private readonly m: MemoryWebhooks) {}

  async enqueue(deliveries: readonly WebhookDeliveryRecord[]): Promise<number> {
    let added = 0;
    for (const d of deliveries) {
      if (this.m.deliveries.has(d.id)) continue;
      this.m.deliveries.set(d.id, structuredClone(d));
      added++;
    }
    return added;
  }

  async get(ownerId: string, endpointId: string, id: string): Promise<WebhookDeliveryRecord | null> {
    const d = this.m.deliveries.get(id);
    return d && d.owner_id === ownerId && d.endpoint_id === endpointId ? structuredClone(d) : null;
  }

  async list(ownerId: string, endpointId: string, query: WebhookDeliveryListQuery): Promise<Page<WebhookDeliveryRecord>> {
    const rows = [...this.m.deliveries.values()].filter((d) => d.owner_id === ownerId && d.endpoint_id === endpointId && (!query.state || d.state === query.state));
    return structuredClone(pageRows(`webhook_deliveries:${endpointId}`, rows, query, (d) => [d.created_at, d.id]));
  }

  async claimDue(now: string, leaseUntil: string, token: string, limit: number): Promise<readonly WebhookDeliveryRecord[]> {
    const pending = [...this.m.deliveries.values()].filter((d) => d.state === 'pending');
    const due = pending
      .filter((d) => d.next_attempt_at !== null && d.next_attempt_at <= now && (d.lease === null || d.lease.until <= now))
      .filter((d) => d.subject === null || !pending.some((e) => e.endpoint_id === d.endpoint_id && e.subject === d.subject && e.position < d.position))
      .sort((a, b) => ((a.next_attempt_at ?? '') < (b.next_attempt_at ?? '') ? -1 : (a.next_attempt_at ?? '') > (b.next_attempt_at ?? '') ? 1 : a.position - b.position))
      .slice(0, limit);
    return due.map((d) => {
      const leased = { ...d, lease: { token, until: leaseUntil } };
      this.m.deliveries.set(d.id, leased);
      return structuredClone(leased);
    });
  }

  async settle(delivery: WebhookDeliveryRecord, token: string): Promise<boolean> {
    const stored = this.m.deliveries.get(delivery.id);
    if (stored?.lease?.token !== token) return false;
    this.m.deliveries.set(delivery.id, structuredClone({ ...delivery, lease: null }));
    return true;
  }

  async prune(before: string): Promise<number> {
    let removed = 0;
    for (const [id, d] of this.m.deliveries) {
      if (d.state !== 'pending' && d.created_at < before) {
        this.m.deliveries.delete(id);
        removed++;
      }
    }
    return removed;
  }
}
