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
  /** Every endpoint of the owner, enabled or not (at most a few dozen), oldest first: what an event is planned for. */
  allOf(ownerId: string): Promise<readonly WebhookEndpointRecord[]>;
  count(ownerId: string): Promise<number>;
  /** Replaces the record when the stored version is `expectedVersion` (the record carries the next one); ConcurrencyError otherwise. */
  update(endpoint: WebhookEndpointRecord, expectedVersion: number): Promise<void>;
  /** Removes the endpoint and its deliveries; false when the owner has no such endpoint. */
  delete(ownerId: string, id: string): Promise<boolean>;
}

export type WebhookDeliveryListQuery = PageQuery & Readonly<{ state?: WebhookDeliveryState }>;

/** One claim of the delivery worker. */
export type WebhookDeliveryClaim = Readonly<{
  now: string;
  /** Deliveries created at or before this have expired: claimable whatever else holds them back, for the worker to fail them. */
  expiredBy: string;
  /** The claimer, and until when its claim holds. */
  token: string;
  leaseUntil: string;
  limit: number;
}>;

export interface WebhookDeliveryStore {
  /** Inserts each delivery whose id is not stored yet; returns how many were new. */
  enqueue(deliveries: readonly WebhookDeliveryRecord[]): Promise<number>;
  get(ownerId: string, endpointId: string, id: string): Promise<WebhookDeliveryRecord | null>;
  /** Newest first by default. */
  list(ownerId: string, endpointId: string, query: WebhookDeliveryListQuery): Promise<Page<WebhookDeliveryRecord>>;
  /**
   * Leases up to `limit` pending deliveries that are not leased (or whose lease ran out) to
   * `token` until `leaseUntil`. Claimable: an expired delivery (created at or before `expiredBy`),
   * or one that is due (`next_attempt_at` ≤ `now`) with no pending delivery of the same endpoint
   * and subject at an earlier position, whose endpoint is enabled and not backing off
   * (`next_retry_at` null or ≤ `now`). While an endpoint is failing (`next_retry_at` set), at most
   * one of its deliveries is out at a time: claiming it takes the endpoint's probe, which `settle`
   * (or the lease running out) gives back. Two workers never get the same delivery.
   */
  claimDue(claim: WebhookDeliveryClaim): Promise<readonly WebhookDeliveryRecord[]>;
  /** Writes a settled delivery (lease cleared, the endpoint's probe given back) if `token` still holds its lease; false otherwise. */
  settle(delivery: WebhookDeliveryRecord, token: string): Promise<boolean>;
  /** Deletes delivered and failed deliveries created before `before`; returns how many. */
  prune(before: string): Promise<number>;
}
