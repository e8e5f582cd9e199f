import { randomUUID } from 'node:crypto';
import { ConcurrencyError, type Clock } from '@berth/core';
import type { WebhookDeliveryRecord, WebhookEndpointRecord } from '@berth/contracts';
import type { Logger, SecretBox, WebhookDeliveryStore, WebhookEndpointStore } from '@berth/ports';
import type { WebhookMetrics } from '@berth/telemetry';
import { endpointAfterAttempt, expireDelivery, expiryCutoff, isExpired, settleDelivery, signedWebhookHeaders, type AttemptOutcome, type DeliveryPolicy } from '@berth/webhooks-domain';
import type { WebhookSender } from './webhook-sender';
import { BatchTicker } from '../../outbound/batch-ticker';

export type WebhookDispatcherOptions = Readonly<{
  policy: DeliveryPolicy;
  /** How long a claimed delivery stays this worker's; past it (a crashed worker) another one attempts it. */
  leaseMs: number;
  /** Deliveries attempted at once. */
  batchSize: number;
  /** Delivered and failed deliveries older than this leave the log. */
  retentionMs: number;
}>;

export type WebhookDispatcherDeps = Readonly<{
  endpoints: Pick<WebhookEndpointStore, 'getById' | 'update'>;
  deliveries: Pick<WebhookDeliveryStore, 'claimDue' | 'settle' | 'prune'>;
  secrets: SecretBox;
  sender: WebhookSender;
  clock: Clock;
  log: Logger;
  metrics: WebhookMetrics;
  options: WebhookDispatcherOptions;
}>;

/**
 * The second half of the delivery worker, a thin shell around the pure rules: claim the due
 * deliveries (a lease, so several workers never send the same one and a dead worker's claim runs
 * out; the store holds back a failing endpoint's deliveries but one), fail the expired ones, sign
 * each other one anew, send it, and store what `settleDelivery` and `endpointAfterAttempt` make of
 * the outcome.
 */
export class WebhookDispatcher {
  private readonly token = randomUUID();
  private readonly ticker: BatchTicker;
  private prunedAt = 0;

  constructor(private readonly d: WebhookDispatcherDeps) {
    this.ticker = new BatchTicker({ tick: () => this.tick(), batchSize: d.options.batchSize, afterRound: () => this.pruneHourly(), log: d.log, what: 'webhook delivery' });
  }

  /** Attempts every delivery due now (up to one batch); returns how many were attempted. */
  async tick(): Promise<number> {
    const now = this.now();
    const claimed = await this.d.deliveries.claimDue({
      now,
      expiredBy: expiryCutoff(now, this.d.options.policy),
      token: this.token,
      leaseUntil: new Date(Date.parse(now) + this.d.options.leaseMs).toISOString(),
      limit: this.d.options.batchSize,
    });
    await Promise.all(claimed.map((delivery) => this.attempt(delivery)));
    return claimed.length;
  }

  /** Ticks every `intervalMs`, and again at once while a batch came back full; prunes the log hourly. */
  start(intervalMs: number): void {
    this.ticker.start(intervalMs);
  }

  /** Stops ticking and waits for the attempts in flight. */
  stop(): Promise<void> {
    return this.ticker.stop();
  }

  private async pruneHourly(): Promise<void> {
    const now = this.d.clock.now().getTime();
    if (now - this.prunedAt < 60 * 60 * 1000) return;
    this.prunedAt = now;
    const pruned = await this.d.deliveries.prune(new Date(now - this.d.options.retentionMs).toISOString());
    if (pruned > 0) this.d.log.info('pruned old webhook deliveries', { pruned });
  }

  private async attempt(delivery: WebhookDeliveryRecord): Promise<void> {
    const endpoint = await this.d.endpoints.getById(delivery.endpoint_id);
    // The endpoint was deleted meanwhile: its deliveries went with it.
    if (!endpoint) return;
    const { policy } = this.d.options;
    const sentAt = this.now();
    if (isExpired(delivery, sentAt, policy)) {
      if (await this.settle(expireDelivery(delivery, sentAt, policy))) this.d.metrics.expired.inc();
      return;
    }
    // Disabled since the claim: the delivery waits, as it was, for the endpoint to be enabled.
    if (endpoint.state !== 'enabled') {
      await this.settle(delivery);
      return;
    }
    const headers = this.sign(endpoint, delivery);
    const outcome: AttemptOutcome = headers
      ? await this.d.sender.send(endpoint.url, headers, delivery.payload)
      : { kind: 'failed', status_code: null, error: 'the signing secret does not open (see the service log)', duration_ms: 0 };
    const now = this.now();
    const settled = settleDelivery(delivery, endpoint, outcome, now, policy);
    if (!(await this.settle(settled))) return;
    this.d.metrics.attempts.inc({ outcome: outcome.kind });
    if (outcome.kind === 'failed') this.d.log.info('webhook delivery attempt failed', { delivery_id: delivery.id, webhook_id: endpoint.id, status_code: outcome.status_code, error: outcome.error, next_attempt_at: settled.next_attempt_at });
    await this.updateEndpoint(delivery.endpoint_id, outcome, sentAt, now);
  }

  /** Writes the delivery back and gives up its lease; false (logged) when another worker took it over meanwhile. */
  private async settle(delivery: WebhookDeliveryRecord): Promise<boolean> {
    if (await this.d.deliveries.settle(delivery, this.token)) return true;
    this.d.log.warn('a webhook delivery outlived its lease; another worker owns it now', { delivery_id: delivery.id });
    return false;
  }

  /** Signature headers for this attempt; null when the secret does not open (a key removed from BERTH_SECRET_KEYS): a failed attempt, so still bounded. */
  private sign(endpoint: WebhookEndpointRecord, delivery: WebhookDeliveryRecord): Readonly<Record<string, string>> | null {
    try {
      const secret = this.d.secrets.open(endpoint.secret, endpoint.id);
      return signedWebhookHeaders(secret, delivery.event_id, Math.floor(this.d.clock.now().getTime() / 1000), delivery.payload);
    } catch (e) {
      this.d.log.error('a webhook signing secret does not open', { webhook_id: endpoint.id, err: e });
      return null;
    }
  }

  /** Writes the endpoint's failure bookkeeping or state on its latest version (the owner or another delivery may have written it meanwhile). */
  private async updateEndpoint(endpointId: string, outcome: AttemptOutcome, sentAt: string, now: string): Promise<void> {
    for (let attempt = 0; attempt < 5; attempt++) {
      const current = await this.d.endpoints.getById(endpointId);
      if (!current) return;
      const next = endpointAfterAttempt(current, outcome, sentAt, now, this.d.options.policy);
      if (!next) return;
      try {
        await this.d.endpoints.update(next, current.version);
        if (next.state === 'disabled' && current.state === 'enabled') {
          this.d.metrics.disabled.inc({ reason: next.disabled_reason });
          this.d.log.warn('webhook endpoint disabled', { webhook_id: next.id, reason: next.disabled_reason, failing_since: next.failing_since });
        }
        return;
      } catch (e) {
        if (!(e instanceof ConcurrencyError)) throw e;
      }
    }
  }

  private now(): string {
    return this.d.clock.now().toISOString();
  }
}
