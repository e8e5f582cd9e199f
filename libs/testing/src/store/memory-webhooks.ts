import { ConcurrencyError } from '@berth/core';
import type { WebhookDeliveryRecord, WebhookEndpointRecord } from '@berth/contracts';
import type { Page, PageQuery, WebhookDeliveryClaim, WebhookDeliveryListQuery, WebhookDeliveryStore, WebhookEndpointStore, WebhookOutbox } from '@berth/ports';
import { pageRows } from './paging';

/**
 * Endpoints, deliveries and probes share one object so deleting an endpoint removes its deliveries,
 * and configuration writes store their deliveries with them, as the real adapters do.
 */
export class MemoryWebhooks {
  readonly endpoints = new Map<string, WebhookEndpointRecord>();
  readonly deliveries = new Map<string, WebhookDeliveryRecord>();
  /** A failing endpoint's one delivery out (its probe), until `until`. */
  readonly probes = new Map<string, { delivery_id: string; until: string }>();
  /** The contract suite's fault: a delivery with this id is refused (as a SQLite trigger or a MongoDB validator refuses it). */
  refusedDeliveryId: string | null = null;

  /**
   * A configuration change and its deliveries as one write: the deliveries are checked first
   * (nothing in memory can be rolled back), then `write` runs and says whether it changed
   * anything; only then are they added. Returns what `write` said.
   */
  withDeliveries(deliveries: WebhookOutbox, write: () => boolean): boolean {
    this.refuseFault(deliveries);
    const changed = write();
    if (changed) this.insert(deliveries);
    return changed;
  }

  /** Adds each delivery whose id is not stored yet; how many were new. */
  insert(deliveries: WebhookOutbox): number {
    this.refuseFault(deliveries);
    let added = 0;
    for (const d of deliveries) {
      if (this.deliveries.has(d.id)) continue;
      this.deliveries.set(d.id, structuredClone(d));
      added++;
    }
    return added;
  }

  private refuseFault(deliveries: WebhookOutbox): void {
    if (deliveries.some((d) => d.id === this.refusedDeliveryId)) throw new Error(`webhook delivery ${String(this.refusedDeliveryId)} refused`);
  }
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

  async allOf(ownerId: string): Promise<readonly WebhookEndpointRecord[]> {
    const rows = [...this.m.endpoints.values()].filter((e) => e.owner_id === ownerId);
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
    this.m.probes.delete(id);
    for (const [key, d] of this.m.deliveries) if (d.endpoint_id === id) this.m.deliveries.delete(key);
    return true;
  }
}

export class MemoryWebhookDeliveries implements WebhookDeliveryStore {
  constructor(private readonly m: MemoryWebhooks) {}

  async enqueue(deliveries: readonly WebhookDeliveryRecord[]): Promise<number> {
    return this.m.insert(deliveries);
  }

  async get(ownerId: string, endpointId: string, id: string): Promise<WebhookDeliveryRecord | null> {
    const d = this.m.deliveries.get(id);
    return d && d.owner_id === ownerId && d.endpoint_id === endpointId ? structuredClone(d) : null;
  }

  async list(ownerId: string, endpointId: string, query: WebhookDeliveryListQuery): Promise<Page<WebhookDeliveryRecord>> {
    const rows = [...this.m.deliveries.values()].filter((d) => d.owner_id === ownerId && d.endpoint_id === endpointId && (!query.state || d.state === query.state));
    return structuredClone(pageRows(`webhook_deliveries:${endpointId}`, rows, query, (d) => [d.created_at, d.id]));
  }

  async claimDue(claim: WebhookDeliveryClaim): Promise<readonly WebhookDeliveryRecord[]> {
    const { now, expiredBy, token, leaseUntil, limit } = claim;
    const pending = [...this.m.deliveries.values()].filter((d) => d.state === 'pending');
    const first = (d: WebhookDeliveryRecord) => d.subject === null || !pending.some((e) => e.endpoint_id === d.endpoint_id && e.subject === d.subject && e.position < d.position);
    const probeFree = (endpointId: string) => (this.m.probes.get(endpointId)?.until ?? '') <= now;
    const open = pending
      .filter((d) => d.lease === null || d.lease.until <= now)
      .filter((d) => {
        if (d.created_at <= expiredBy) return true;
        const endpoint = this.m.endpoints.get(d.endpoint_id);
        if (!endpoint || endpoint.state !== 'enabled' || (d.next_attempt_at ?? '') > now || !first(d)) return false;
        return !endpoint.next_retry_at || (endpoint.next_retry_at <= now && probeFree(endpoint.id));
      })
      .sort((a, b) => ((a.next_attempt_at ?? '') < (b.next_attempt_at ?? '') ? -1 : (a.next_attempt_at ?? '') > (b.next_attempt_at ?? '') ? 1 : a.position - b.position));
    const claimed: WebhookDeliveryRecord[] = [];
    for (const d of open) {
      if (claimed.length >= limit) break;
      const probe = d.created_at > expiredBy && Boolean(this.m.endpoints.get(d.endpoint_id)?.next_retry_at);
      if (probe && !probeFree(d.endpoint_id)) continue;
      if (probe) this.m.probes.set(d.endpoint_id, { delivery_id: d.id, until: leaseUntil });
      const leased = { ...d, lease: { token, until: leaseUntil } };
      this.m.deliveries.set(d.id, leased);
      claimed.push(structuredClone(leased));
    }
    return claimed;
  }

  async settle(delivery: WebhookDeliveryRecord, token: string): Promise<boolean> {
    const stored = this.m.deliveries.get(delivery.id);
    if (stored?.lease?.token !== token) return false;
    this.m.deliveries.set(delivery.id, structuredClone({ ...delivery, lease: null }));
    if (this.m.probes.get(delivery.endpoint_id)?.delivery_id === delivery.id) this.m.probes.delete(delivery.endpoint_id);
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
