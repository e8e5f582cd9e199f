import type { WebhookDeliveryRecord, WebhookEndpointRecord } from '@berth/contracts';

/** A webhook endpoint as the API returns it: never its secret. `failing_since`/`next_retry_at`: set while every attempt fails. */
export function renderWebhookEndpoint(e: WebhookEndpointRecord): Record<string, unknown> {
  return {
    type: 'webhook_endpoint',
    id: e.id,
    url: e.url,
    name: e.name,
    description: e.description,
    enabled_events: e.enabled_events,
    state: e.state,
    disabled_reason: e.disabled_reason,
    failing_since: e.failing_since,
    next_retry_at: e.next_retry_at,
    created_at: e.created_at,
    updated_at: e.updated_at,
  };
}

/** One row of the delivery log: the event as it was sent, and what each attempt got. */
export function renderWebhookDelivery(d: WebhookDeliveryRecord): Record<string, unknown> {
  return {
    type: 'webhook_delivery',
    id: d.id,
    webhook_id: d.endpoint_id,
    event_id: d.event_id,
    event_type: d.event_type,
    event: JSON.parse(d.payload) as unknown,
    state: d.state,
    attempt_count: d.attempt_count,
    attempts: d.attempts,
    next_attempt_at: d.next_attempt_at,
    delivered_at: d.delivered_at,
    redelivery_of: d.redelivery_of,
    created_at: d.created_at,
  };
}
