import { createHash } from 'node:crypto';
import type { WebhookAttempt, WebhookDeliveryRecord, WebhookDisabledReason, WebhookEndpointRecord, WebhookEvent } from '@berth/contracts';
import type { DeliveryPolicy } from './delivery-policy';
import { deliveryIdFor } from './webhook-events';

/**
 * The delivery worker's rules, pure: which deliveries an event makes, what an attempt's outcome
 * does to the delivery and to its endpoint, when a delivery expires, what a redelivery is. The
 * shell claims deliveries from the store, sends them, and writes back what these return.
 *
 * Two kinds of failure are told apart. A receiver that is down fails every delivery: the
 * endpoint backs off (`next_retry_at`) and is tried with one delivery at a time (a probe), while
 * every other delivery waits, planned and in order, without spending attempts. A delivery that
 * fails while its endpoint otherwise answers backs off on its own (`own_failures`). Either way a
 * delivery is tried until `maxAgeMs` after it was planned, never longer.
 */

/** An event to deliver, with its ordering key: deliveries of one subject to one endpoint go out in `position` order. */
export type EventToDeliver = Readonly<{ event: WebhookEvent; subject: string | null; position: number }>;

/**
 * The deliveries of some events: one per endpoint of the owner that subscribes to the event's
 * type and existed when it happened (an endpoint never receives events older than itself).
 * Disabled endpoints get theirs too: they wait, and go out if it is enabled before they expire.
 */
export function planDeliveries(events: readonly EventToDeliver[], endpoints: readonly WebhookEndpointRecord[], now: string): WebhookDeliveryRecord[] {
  const planned: WebhookDeliveryRecord[] = [];
  for (const { event, subject, position } of events) {
    for (const endpoint of endpoints) {
      if (endpoint.owner_id !== event.data.organization_id) continue;
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
        own_failures: 0,
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
  | Readonly<{ kind: 'failed'; status_code: number | null; error: string; duration_ms: number; disable?: Exclude<WebhookDisabledReason, '' | 'consecutive_failures'> }>;

const plusMs = (iso: string, ms: number): string => new Date(Date.parse(iso) + ms).toISOString();

/** An endpoint is failing from its first failed attempt until one succeeds (or its owner enables it again). */
export const isFailing = (endpoint: Pick<WebhookEndpointRecord, 'failing_since'>): boolean => Boolean(endpoint.failing_since);

/** The wait after the `failures`-th failure of a delivery or an endpoint (`key`), spread by a jitter that is a pure function of both. */
export function retryDelayMs(key: string, failures: number, policy: DeliveryPolicy): number {
  const base = policy.retryDelaysMs[Math.min(failures - 1, policy.retryDelaysMs.length - 1)] ?? 0;
  const unit = createHash('sha256').update(`${key}/${failures}`).digest().readUInt32BE(0) / 0xffffffff;
  return Math.round(base * (1 + policy.jitter * (2 * unit - 1)));
}

/** Deliveries planned at or before this have expired by `now`. */
export const expiryCutoff = (now: string, policy: DeliveryPolicy): string => plusMs(now, -policy.maxAgeMs);

export const isExpired = (delivery: Pick<WebhookDeliveryRecord, 'created_at'>, now: string, policy: DeliveryPolicy): boolean => delivery.created_at <= expiryCutoff(now, policy);

/** A delivery whose time ran out: failed without another attempt, saying why in its log. */
export function expireDelivery(delivery: WebhookDeliveryRecord, now: string, policy: DeliveryPolicy): WebhookDeliveryRecord {
  const note: WebhookAttempt = { attempted_at: now, status_code: null, error: `expired: not delivered within ${duration(policy.maxAgeMs)}`, duration_ms: 0 };
  return { ...delivery, state: 'failed', next_attempt_at: null, attempts: keep([...delivery.attempts, note], policy) };
}

/**
 * What an attempt does to its delivery. `sentTo` is the endpoint as it was when the attempt was
 * sent. Delivered: done. Failed as a probe of an already failing endpoint: the failure is the
 * endpoint's, so the delivery stays due (it waits for the endpoint's next probe). Failed otherwise:
 * the delivery's own retry, after the policy's delay for its own failures so far.
 */
export function settleDelivery(delivery: WebhookDeliveryRecord, sentTo: WebhookEndpointRecord, outcome: AttemptOutcome, now: string, policy: DeliveryPolicy): WebhookDeliveryRecord {
  const attempt: WebhookAttempt = {
    attempted_at: now,
    status_code: outcome.status_code,
    error: outcome.kind === 'failed' ? outcome.error : null,
    duration_ms: outcome.duration_ms,
  };
  const attempted = { ...delivery, attempt_count: delivery.attempt_count + 1, attempts: keep([...delivery.attempts, attempt], policy) };
  if (outcome.kind === 'delivered') return { ...attempted, state: 'delivered', delivered_at: now, next_attempt_at: null };
  if (isFailing(sentTo)) return attempted;
  const ownFailures = delivery.own_failures + 1;
  return { ...attempted, own_failures: ownFailures, next_attempt_at: plusMs(now, retryDelayMs(delivery.id, ownFailures, policy)) };
}

/**
 * What an attempt does to its endpoint (applied to the endpoint's latest version); null when it
 * does not change. Delivered: a failing endpoint answers again. Failed: an answering endpoint
 * starts failing and is probed after the first delay; a failed probe (an attempt sent since the
 * failure began) pushes the next probe out along the policy's delays, and once the endpoint has
 * failed for `disableAfterMs` it is disabled. Attempts that were in flight when the failure began
 * are the same outage and change nothing. A refused target or a redirect disables it at once.
 */
export function endpointAfterAttempt(endpoint: WebhookEndpointRecord, outcome: AttemptOutcome, sentAt: string, now: string, policy: DeliveryPolicy): WebhookEndpointRecord | null {
  if (outcome.kind === 'delivered') return isFailing(endpoint) ? bump(endpoint, now, { consecutive_failures: 0, failing_since: null, next_retry_at: null }) : null;
  const failing = failingAfter(endpoint, sentAt, now, policy);
  const failedTooLong = failing !== null && Date.parse(now) - Date.parse(failing.failing_since) >= policy.disableAfterMs;
  const reason: WebhookDisabledReason | null = outcome.disable ?? (failedTooLong ? 'consecutive_failures' : null);
  const disable = reason !== null && endpoint.state === 'enabled' ? { state: 'disabled' as const, disabled_reason: reason } : null;
  if (!failing && !disable) return null;
  return bump(endpoint, now, { ...failing, ...disable });
}

type Failing = Readonly<{ consecutive_failures: number; failing_since: string; next_retry_at: string }>;

/** The failure bookkeeping after a failed attempt; null when the attempt was part of a failure already counted. */
function failingAfter(endpoint: WebhookEndpointRecord, sentAt: string, now: string, policy: DeliveryPolicy): Failing | null {
  if (!endpoint.failing_since) return { consecutive_failures: 1, failing_since: now, next_retry_at: plusMs(now, retryDelayMs(endpoint.id, 1, policy)) };
  if (sentAt < endpoint.failing_since) return null;
  const streak = endpoint.consecutive_failures + 1;
  return { consecutive_failures: streak, failing_since: endpoint.failing_since, next_retry_at: plusMs(now, retryDelayMs(endpoint.id, streak, policy)) };
}

/** A new delivery of an already delivered (or failed) event: outside the per-session order, attempted now, with a lifetime of its own. */
export function redeliveryOf(original: WebhookDeliveryRecord, id: string, now: string): WebhookDeliveryRecord {
  return {
    ...original,
    id,
    subject: null,
    position: 0,
    state: 'pending',
    attempt_count: 0,
    own_failures: 0,
    attempts: [],
    next_attempt_at: now,
    delivered_at: null,
    created_at: now,
    redelivery_of: original.id,
    lease: null,
  };
}

const keep = (attempts: readonly WebhookAttempt[], policy: DeliveryPolicy): readonly WebhookAttempt[] => attempts.slice(-policy.attemptsKept);

/** "3 days", "90 seconds", "500 ms": how the expiry note names the policy's lifetime. */
function duration(ms: number): string {
  const units: readonly [number, string][] = [
    [24 * 60 * 60 * 1000, 'day'],
    [60 * 60 * 1000, 'hour'],
    [60 * 1000, 'minute'],
    [1000, 'second'],
  ];
  const unit = units.find(([size]) => ms >= size && ms % size === 0);
  if (!unit) return `${ms} ms`;
  const n = ms / unit[0];
  return `${n} ${unit[1]}${n === 1 ? '' : 's'}`;
}

/** A new version of the endpoint; `updated_at` moves only when its state does (the failure bookkeeping is not a change of its owner's). */
const bump = (endpoint: WebhookEndpointRecord, now: string, change: Partial<WebhookEndpointRecord>): WebhookEndpointRecord => ({
  ...endpoint,
  ...change,
  version: endpoint.version + 1,
  updated_at: change.state !== undefined && change.state !== endpoint.state ? now : endpoint.updated_at,
});
