import type { WebhookAttempt, WebhookDeliveryState, WebhookDisabledReason, WebhookEndpointState, WebhookEventType } from '@berth/contracts';
import type { Page, PageQuery } from './read-models.port';
import type { SealedSecret } from './secrets.port';

/** An owner's webhook endpoint. `version` increases with every write (compare-and-set). */
export type WebhookEndpointRecord = Readonly<{
  id: string;
  owner_id: string;
  url: string;
  name: string;
  description: string;
  enabled_events: readonly WebhookEventType[];
  state: WebhookEndpointState;
  disabled_reason: WebhookDisabledReason;
  /** The `whsec_…` signing secret, sealed. */
  secret: SealedSecret;
  /** Failed attempts since the last successful one (the endpoint is disabled past a threshold). */
  consecutive_failures: number;
  version: number;
  created_at: string;
  updated_at: string;
}>;

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

/**
 * One event to one endpoint: the outbox row the delivery worker works from, and the delivery log
 * the owner reads. The first delivery of an event to an endpoint has a deterministic id, so
 * enqueueing it again is a no-op; a redelivery is a new row (`redelivery_of`).
 */
export type WebhookDeliveryRecord = Readonly<{
  id: string;
  owner_id: string;
  endpoint_id: string;
  event_id: string;
  event_type: WebhookEventType;
  /** Deliveries of one subject (a session) to one endpoint go out in `position` order; null: no order (redeliveries, resource events). */
  subject: string | null;
  position: number;
  /** The exact JSON body sent and signed, the same on every attempt. */
  payload: string;
  state: WebhookDeliveryState;
  attempt_count: number;
  /** The latest attempts, oldest first (bounded). */
  attempts: readonly WebhookAttempt[];
  next_attempt_at: string | null;
  delivered_at: string | null;
  created_at: string;
  redelivery_of: string | null;
  /** Held by a worker until `until` (ISO); a crashed worker's lease runs out and the delivery is attempted again. */
  lease: Readonly<{ token: string; until: string }> | null;
}>;

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
