import { createHash } from 'node:crypto';
import type { WebhookAttempt, WebhookDeliveryRecord, WebhookDisabledReason, WebhookEndpointRecord, WebhookEvent } from '@berth/contracts';
import { maxAttempts, type DeliveryPolicy } from './delivery-policy';
import { deliveryIdFor } from './webhook-events';

/**
 * The delivery worker's rules, pure: which deliveries an event makes, what an attempt's outcome does
 * to the delivery and its endpoint, what a redelivery is. The shell claims due deliveries from the
 * store, sends them, and writes back what `settleAttempt` returns.
 */

/** An event to deliver, with its ordering key: deliveries of one subject to one endpoint go out in `position` order. */
export type EventToDeliver = Readonly<{ event: WebhookEvent; subject: string | null; position: number }>;

/**
 * The deliveries of some events: one per enabled endpoint of the owner that subscribes to the
 * event's type and existed when it happened (an endpoint never receives events older than itself).
 */
export function planDeliveries(events: readonly EventToDeliver[], endpoints: readonly WebhookEndpointRecord[], now: string): WebhookDeliveryRecord[] {
  const planned: WebhookDeliveryRecord[] = [];
  for (const { event, subject, position } of events) {
    for (const endpoint of endpoints) {
      if (endpoint.state !== 'enabled' || endpoint.owner_id !== event.data.organization_id) continue;
      if (!endpoint.enabled_events.includes(event.data.type) || event.created_at < endpoint.created_at) continue;
      planned.push({
        id: deliveryIdFor(endpoint.id, event.id),
        owner_id: endpoint.owner_id,
        endpoint_id: endpoint.id,
        event_id: event.id,
        event_type: event.data.type,
        subject,
        position,
        payload: JSON.stringify(event),
        state: 'pending',
        attempt_count: 0,
        attempts: [],
        next_attempt_at: now,
        delivered_at: null,
        created_at: now,
        redelivery_of: null,
        lease: null,
      });
    }
  }
  return planned;
}

/** What one HTTP attempt came to. `disable` ends the endpoint at once (a target it may not reach, a redirect). */
export type AttemptOutcome =
  | Readonly<{ kind: 'delivered'; status_code: number; duration_ms: number }>
  | Readonly<{ kind: 'failed'; status_code: number | null; error: string; duration_ms: number; disable?: Exclude<WebhookDisabledReason, '' | 'consecutive_failures'> }>
  /** Not sent: the endpoint was disabled meanwhile. */
  | Readonly<{ kind: 'skipped'; reason: string }>;

export type Settled = Readonly<{
  delivery: WebhookDeliveryRecord;
  /** The endpoint after the attempt, or null when it does not change. */
  endpoint: WebhookEndpointRecord | null;
}>;

const plusMs = (iso: string, ms: number): string => new Date(Date.parse(iso) + ms).toISOString();

/** The delay before the next attempt, spread by a jitter that is a pure function of the delivery and attempt. */
export function retryDelayMs(delivery: Pick<WebhookDeliveryRecord, 'id'>, attemptCount: number, policy: DeliveryPolicy): number {
  const base = policy.retryDelaysMs[Math.min(attemptCount - 1, policy.retryDelaysMs.length - 1)] ?? 0;
  const unit = createHash('sha256').update(`${delivery.id}/${attemptCount}`).digest().readUInt32BE(0) / 0xffffffff;
  return Math.round(base * (1 + policy.jitter * (2 * unit - 1)));
}

/**
 * Applies an attempt's outcome. Delivered: done, and the endpoint's failure streak ends. Failed:
 * the next attempt after the policy's delay, or `failed` once the attempts are used up (never an
 * unbounded loop); the endpoint's streak grows and past the threshold (or at once for a refused
 * target or a redirect) the endpoint is disabled. Skipped: failed without an attempt.
 */
export function settleAttempt(delivery: WebhookDeliveryRecord, endpoint: WebhookEndpointRecord, outcome: AttemptOutcome, now: string, policy: DeliveryPolicy): Settled {
  if (outcome.kind === 'skipped') {
    const note: WebhookAttempt = { attempted_at: now, status_code: null, error: `not sent: ${outcome.reason}`, duration_ms: 0 };
    return { delivery: { ...delivery, state: 'failed', next_attempt_at: null, attempts: keep([...delivery.attempts, note], policy) }, endpoint: null };
  }
  const attempt: WebhookAttempt = {
    attempted_at: now,
    status_code: outcome.status_code,
    error: outcome.kind === 'failed' ? outcome.error : null,
    duration_ms: outcome.duration_ms,
  };
  const attempted = { ...delivery, attempt_count: delivery.attempt_count + 1, attempts: keep([...delivery.attempts, attempt], policy) };
  if (outcome.kind === 'delivered') {
    const endpointAfter = endpoint.consecutive_failures === 0 ? null : bump(endpoint, now, { consecutive_failures: 0 });
    return { delivery: { ...attempted, state: 'delivered', delivered_at: now, next_attempt_at: null }, endpoint: endpointAfter };
  }
  const exhausted = attempted.attempt_count >= maxAttempts(policy);
  const deliveryAfter: WebhookDeliveryRecord = exhausted
    ? { ...attempted, state: 'failed', next_attempt_at: null }
    : { ...attempted, state: 'pending', next_attempt_at: plusMs(now, retryDelayMs(delivery, attempted.attempt_count, policy)) };
  const streak = endpoint.consecutive_failures + 1;
  const reason: WebhookDisabledReason | null = outcome.disable ?? (streak >= policy.disableAfterFailures ? 'consecutive_failures' : null);
  const endpointAfter =
    reason && endpoint.state === 'enabled'
      ? bump(endpoint, now, { consecutive_failures: streak, state: 'disabled', disabled_reason: reason })
      : bump(endpoint, now, { consecutive_failures: streak });
  return { delivery: deliveryAfter, endpoint: endpointAfter };
}

/** A new delivery of an already delivered (or failed) event: outside the per-session order, attempted now. */
export function redeliveryOf(original: WebhookDeliveryRecord, id: string, now: string): WebhookDeliveryRecord {
  return {
    ...original,
    id,
    subject: null,
    position: 0,
    state: 'pending',
    attempt_count: 0,
    attempts: [],
    next_attempt_at: now,
    delivered_at: null,
    created_at: now,
    redelivery_of: original.id,
    lease: null,
  };
}

const keep = (attempts: readonly WebhookAttempt[], policy: DeliveryPolicy): readonly WebhookAttempt[] => attempts.slice(-policy.attemptsKept);

/** A new version of the endpoint; `updated_at` moves only when its state does (the streak is bookkeeping). */
const bump = (endpoint: WebhookEndpointRecord, now: string, change: Partial<WebhookEndpointRecord>): WebhookEndpointRecord => ({
  ...endpoint,
  ...change,
  version: endpoint.version + 1,
  updated_at: change.state !== undefined && change.state !== endpoint.state ? now : endpoint.updated_at,
});
