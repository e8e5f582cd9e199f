import { z } from 'zod';
import { OutboundUrlSchema } from './outbound-url';
import type { SealedSecret } from './secrets';

/**
 * Webhook endpoints: Berth's own configuration API (the Managed Agents API registers endpoints in
 * its console), shaped like the SDK's organization webhook endpoints, delivering the Managed
 * Agents webhook events (`BetaWebhookEvent`: `{id: "wevt_…", created_at, type: "event", data}`)
 * signed the way `client.beta.webhooks.unwrap()` verifies (Standard Webhooks).
 */

/** Session events, named as Managed Agents webhooks name them (`session.error` is Berth's own). */
export const SESSION_WEBHOOK_EVENT_TYPES = [
  'session.created',
  'session.updated',
  'session.running',
  'session.idled',
  'session.requires_action',
  'session.archived',
  'session.deleted',
  'session.status_run_started',
  'session.status_idled',
  'session.status_rescheduled',
  'session.status_terminated',
  'session.error',
] as const;

/**
 * Configuration changes, as Managed Agents names them (it has no `vault.updated`; Berth serves no
 * agent delete, so no `agent.deleted`), and `vault_credential.refresh_failed`: Berth's refresher
 * could not keep an `mcp_oauth` credential's token alive.
 */
export const RESOURCE_WEBHOOK_EVENT_TYPES = [
  'agent.created',
  'agent.updated',
  'agent.archived',
  'environment.created',
  'environment.updated',
  'environment.archived',
  'environment.deleted',
  'vault.created',
  'vault.archived',
  'vault.deleted',
  'vault_credential.created',
  'vault_credential.archived',
  'vault_credential.deleted',
  'vault_credential.refresh_failed',
] as const;
export type ResourceWebhookEventType = (typeof RESOURCE_WEBHOOK_EVENT_TYPES)[number];

/**
 * Every type Berth delivers. Types of the Managed Agents API that Berth does not emit (threads,
 * outcomes, deployments, memory stores, …) are refused, not
 * silently accepted.
 */
export const WEBHOOK_EVENT_TYPES = [...SESSION_WEBHOOK_EVENT_TYPES, ...RESOURCE_WEBHOOK_EVENT_TYPES] as const;
export const WebhookEventTypeSchema = z.enum(WEBHOOK_EVENT_TYPES);
export type WebhookEventType = z.infer<typeof WebhookEventTypeSchema>;

/** The thin payload: which resource changed; receivers fetch it for its state. */
export type WebhookEventData = Readonly<{
  type: WebhookEventType;
  id: string;
  organization_id: string;
  workspace_id: string;
  /** `vault_credential.*` only: the vault the credential is in. */
  vault_id?: string;
}>;

/** One delivery's body, exactly as signed and sent (`BetaWebhookEvent`). */
export type WebhookEvent = Readonly<{ id: string; created_at: string; type: 'event'; data: WebhookEventData }>;

export const WEBHOOK_ENDPOINT_STATES = ['enabled', 'disabled'] as const;
export type WebhookEndpointState = (typeof WEBHOOK_ENDPOINT_STATES)[number];

/**
 * Why Berth disabled an endpoint by itself; '' when enabled or disabled by its owner.
 * `consecutive_failures`: every attempt failed for the policy's `disableAfterMs` (5 days by default).
 */
export type WebhookDisabledReason = '' | 'consecutive_failures' | 'target_not_allowed' | 'redirect';

export const WebhookUrlSchema = OutboundUrlSchema;

const EnabledEventsSchema = z
  .array(WebhookEventTypeSchema)
  .max(WEBHOOK_EVENT_TYPES.length)
  .refine((types) => new Set(types).size === types.length, 'must not list a type twice');

/** `POST /v1/webhooks`. */
export const WebhookEndpointCreateParamsSchema = z.strictObject({
  url: WebhookUrlSchema,
  enabled_events: EnabledEventsSchema.min(1, 'must list at least one event type'),
  name: z.string().max(256).optional(),
  description: z.string().max(2048).optional(),
});
export type WebhookEndpointCreateParams = z.infer<typeof WebhookEndpointCreateParamsSchema>;

/** `POST /v1/webhooks/{id}`: only the fields sent change; an empty `enabled_events` leaves the set as it is. */
export const WebhookEndpointUpdateParamsSchema = z.strictObject({
  url: WebhookUrlSchema.optional(),
  enabled_events: EnabledEventsSchema.optional(),
  name: z.string().max(256).optional(),
  description: z.string().max(2048).optional(),
  /**
   * `disabled` pauses deliveries: events keep being planned and wait. `enabled` resumes them (and
   * clears `disabled_reason` and the failure streak): what waited goes out in order, except what
   * expired meanwhile (`failed` in the log, can be redelivered).
   */
  state: z.enum(WEBHOOK_ENDPOINT_STATES).optional(),
});
export type WebhookEndpointUpdateParams = z.infer<typeof WebhookEndpointUpdateParamsSchema>;

export const WEBHOOK_DELIVERY_STATES = ['pending', 'delivered', 'failed'] as const;
export type WebhookDeliveryState = (typeof WEBHOOK_DELIVERY_STATES)[number];

/** One HTTP attempt of a delivery, as the delivery log shows it. */
export type WebhookAttempt = Readonly<{
  attempted_at: string;
  /** The receiver's HTTP status; null when no answer came (refused, timed out, not allowed). */
  status_code: number | null;
  /** Why the attempt failed; null when it succeeded. */
  error: string | null;
  duration_ms: number;
}>;

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
  /** Failed attempts since the last successful one that counted toward the endpoint's backoff (one per probe). */
  consecutive_failures: number;
  /** Since when every attempt has failed (the first failure after a success); null while it answers. */
  failing_since: string | null;
  /** While failing: no attempt to it before this, then one at a time (a probe); null while it answers. */
  next_retry_at: string | null;
  version: number;
  created_at: string;
  updated_at: string;
}>;

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
  /**
   * Failed attempts sent while its endpoint otherwise answered: how far along its own retry
   * schedule it is. A probe of an endpoint that was already failing does not count (that failure
   * is the endpoint's, and the endpoint backs off instead).
   */
  own_failures: number;
  /** The latest attempts, oldest first (bounded). */
  attempts: readonly WebhookAttempt[];
  next_attempt_at: string | null;
  delivered_at: string | null;
  created_at: string;
  redelivery_of: string | null;
  /** Held by a worker until `until` (ISO); a crashed worker's lease runs out and the delivery is attempted again. */
  lease: Readonly<{ token: string; until: string }> | null;
}>;
