import type { WebhookDeliveryRecord, WebhookDeliveryState, WebhookEndpointRecord } from '@berth/contracts';
import type { Page, PageQuery } from './read-models.port';

export interface WebhookEndpointStore {
  /** Inserts a new endpoint (version 1). */
  insert(endpoint: WebhookEndpointRecord): Promise<void>;
  /** Null for another owner's id. */
  get(ownerId: string, id: string): Promise<WebhookEndpointRecord | null>;
  /** Internal lookup for the delivery worker (no owner check). */
  getById(id: string): Promise<WebhookEndpointRecord | null>;
  /** Newest first by default. */
  list(ownerId: string, query: PageQuery): Promise<Page<WebhookEndpointRecord>>;
  /** Every endpoint of the owner that receives deliveries now. */
  enabledOf(ownerId: string): Promise<readonly WebhookEndpointRecord[]>;
  count(ownerId: string): Promise<number>;
  /** Replaces the record when the stored version is `expectedVersion` (the record carries the next one); ConcurrencyError otherwise. */
  update(endpoint: WebhookEndpointRecord, expectedVersion: number): Promise<void>;
  /** Removes the endpoint and its deliveries; false when the owner has no such endpoint. */
  delete(ownerId: string, id: string): Promise<boolean>;
}

export type WebhookDeliveryListQuery = PageQuery & Readonly<{ state?: WebhookDeliveryState }>;

export interface WebhookDeliveryStore {
  /** Inserts each delivery whose id is not stored yet; returns how many were new. */
  enqueue(deliveries: readonly WebhookDeliveryRecord[]): Promise<number>;
  get(ownerId: string, endpointId: string, id: string): Promise<WebhookDeliveryRecord | null>;
  /** Newest first by default. */
  list(ownerId: string, endpointId: string, query: WebhookDeliveryListQuery): Promise<Page<WebhookDeliveryRecord>>;
  /**
   * Leases up to `limit` due deliveries to `token` until `leaseUntil`: pending, `next_attempt_at` ≤
   * `now`, not leased (or the lease ran out), and no pending delivery of the same endpoint and
   * subject at an earlier position. Two workers never get the same delivery.
   */
  claimDue(now: string, leaseUntil: string, token: string, limit: number): Promise<readonly WebhookDeliveryRecord[]>;
  /** Writes a settled delivery (lease cleared) if `token` still holds its lease; false otherwise. */
  settle(delivery: WebhookDeliveryRecord, token: string): Promise<boolean>;
  /** Deletes delivered and failed deliveries created before `before`; returns how many. */
  prune(before: string): Promise<number>;
}
