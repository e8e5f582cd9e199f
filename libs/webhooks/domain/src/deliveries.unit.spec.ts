import type { RecordedEvent, WebhookDeliveryRecord, WebhookEndpointRecord } from '@berth/contracts';
import { defaultDeliveryPolicy, type DeliveryPolicy } from './delivery-policy';
import { endpointAfterAttempt, expireDelivery, isExpired, planDeliveries, redeliveryOf, retryDelayMs, settleDelivery, type AttemptOutcome, type EventToDeliver } from './deliveries';
import { sessionWebhookEvents } from './webhook-events';

const T0 = Date.UTC(2026, 0, 1);
const at = (s: number) => new Date(T0 + s * 1000).toISOString();
const DAY = 24 * 60 * 60;
const policy: DeliveryPolicy = { retryDelaysMs: [1000, 4000, 9000], jitter: 0, maxAgeMs: 3 * DAY * 1000, disableAfterMs: 5 * DAY * 1000, attemptsKept: 3 };

const endpoint = (over: Partial<WebhookEndpointRecord> = {}): WebhookEndpointRecord => ({
  id: 'whk_a',
  owner_id: 'owner_a',
  url: 'https://hooks.example.com/',
  name: '',
  description: '',
  enabled_events: ['session.status_idled', 'session.requires_action'],
  state: 'enabled',
  disabled_reason: '',
  secret: { key_id: 'k1', iv: '', ciphertext: '', tag: '' },
  consecutive_failures: 0,
  failing_since: null,
  next_retry_at: null,
  version: 1,
  created_at: at(0),
  updated_at: at(0),
  ...over,
});

/** An endpoint that has been failing since `since`, with `streak` failures counted. */
const failing = (since: number, streak = 1, over: Partial<WebhookEndpointRecord> = {}) => endpoint({ failing_since: at(since), consecutive_failures: streak, next_retry_at: at(since + 1), ...over });

const idle = (seq: number, occurredAt = at(10)): RecordedEvent => ({
  id: `sevt_${seq}`,
  session_id: 'sesn_1',
  seq,
  schema_version: 1,
  command_id: `cmd_${seq}`,
  occurred_at: occurredAt,
  type: 'TurnAwaitingConfirmation',
  data: { turn_id: 'turn_1', event_ids: ['sevt_tool'] },
});

const toDeliver = (event: RecordedEvent, owner = 'owner_a'): EventToDeliver[] =>
  sessionWebhookEvents(event, owner).map(({ event: e, position }) => ({ event: e, subject: event.session_id, position }));

const pending = (over: Partial<WebhookDeliveryRecord> = {}): WebhookDeliveryRecord => ({
  ...(planDeliveries(toDeliver(idle(3)), [endpoint()], at(10))[0] as WebhookDeliveryRecord),
  ...over,
});

const ok: AttemptOutcome = { kind: 'delivered', status_code: 204, duration_ms: 12 };
const down: AttemptOutcome = { kind: 'failed', status_code: null, error: 'ECONNREFUSED', duration_ms: 1 };

describe('planDeliveries: which endpoints an event goes to', () => {
  it('given an endpoint that subscribes to two of the three types an idle-for-action event stands for, plans one delivery per type, in order', () => {
    const planned = planDeliveries(toDeliver(idle(3)), [endpoint()], at(11));
    expect(planned.map((d) => [d.event_type, d.subject, d.position])).toEqual([
      ['session.status_idled', 'sesn_1', 48],
      ['session.requires_action', 'sesn_1', 50],
    ]);
    expect(planned.every((d) => d.state === 'pending' && d.next_attempt_at === at(11) && d.attempt_count === 0 && d.own_failures === 0)).toBe(true);
    expect(JSON.parse(planned[0]?.payload ?? '')).toEqual({
      id: planned[0]?.event_id,
      created_at: at(10),
      type: 'event',
      data: { type: 'session.status_idled', id: 'sesn_1', organization_id: 'owner_a', workspace_id: 'default' },
    });
  });

  it('never plans for another owner’s endpoint, one that does not subscribe, or one created after the event', () => {
    const endpoints = [endpoint({ id: 'whk_b', owner_id: 'owner_b' }), endpoint({ id: 'whk_other', enabled_events: ['session.created'] }), endpoint({ id: 'whk_late', created_at: at(20) })];
    expect(planDeliveries(toDeliver(idle(3, at(10))), endpoints, at(30))).toEqual([]);
  });

  it('plans for a disabled or failing endpoint too: its deliveries wait for it instead of being lost', () => {
    const planned = planDeliveries(toDeliver(idle(3)), [endpoint({ id: 'whk_off', state: 'disabled', disabled_reason: 'consecutive_failures' }), failing(5, 40, { id: 'whk_down' })], at(11));
    expect(planned.map((d) => d.endpoint_id)).toEqual(['whk_off', 'whk_down', 'whk_off', 'whk_down']);
  });

  it('plans the same ids for a redelivered stream message, so enqueueing it again adds nothing', () => {
    const first = planDeliveries(toDeliver(idle(3)), [endpoint()], at(11)).map((d) => [d.id, d.event_id]);
    const again = planDeliveries(toDeliver(idle(3)), [endpoint()], at(99)).map((d) => [d.id, d.event_id]);
    expect(again).toEqual(first);
  });
});

describe('settleDelivery: what an attempt does to its delivery', () => {
  it('given a 2xx, the delivery is delivered', () => {
    const delivery = settleDelivery(pending(), endpoint(), ok, at(12), policy);
    expect(delivery).toMatchObject({ state: 'delivered', delivered_at: at(12), next_attempt_at: null, attempt_count: 1 });
    expect(delivery.attempts).toEqual([{ attempted_at: at(12), status_code: 204, error: null, duration_ms: 12 }]);
  });

  it('given failures while its endpoint otherwise answers, retries on its own after each delay of the policy, the last one repeating', () => {
    let delivery = pending();
    const times: (string | null)[] = [];
    for (let i = 0; i < 5; i++) {
      delivery = settleDelivery(delivery, endpoint(), { kind: 'failed', status_code: 500, error: 'HTTP 500', duration_ms: 5 }, at(100 + i * 100), policy);
      times.push(delivery.next_attempt_at);
    }
    expect(times).toEqual([at(101), at(204), at(309), at(409), at(509)]);
    expect(delivery).toMatchObject({ state: 'pending', attempt_count: 5, own_failures: 5 });
    expect(delivery.attempts.map((a) => a.attempted_at)).toEqual([at(300), at(400), at(500)]);
  });

  it('given a failed probe of an endpoint that was already failing, the failure is the endpoint’s: the delivery stays due and its own backoff does not grow', () => {
    const delivery = settleDelivery(pending({ next_attempt_at: at(10) }), failing(5, 3), down, at(50), policy);
    expect(delivery).toMatchObject({ state: 'pending', attempt_count: 1, own_failures: 0, next_attempt_at: at(10) });
    expect(delivery.attempts.at(-1)).toEqual({ attempted_at: at(50), status_code: null, error: 'ECONNREFUSED', duration_ms: 1 });
  });

  it('spreads retry delays by the jitter, the same for the same delivery and failure', () => {
    const jittery = { ...policy, jitter: 0.5 };
    const delays = ['whd_1', 'whd_2', 'whd_3', 'whd_4'].map((id) => retryDelayMs(id, 1, jittery));
    expect(new Set(delays).size).toBeGreaterThan(1);
    expect(delays.every((d) => d >= 500 && d <= 1500)).toBe(true);
    expect(retryDelayMs('whd_1', 1, jittery)).toBe(delays[0]);
  });
});

describe('endpointAfterAttempt: what an attempt does to its endpoint', () => {
  it('given a 2xx, an answering endpoint is not rewritten, and a failing one answers again', () => {
    expect(endpointAfterAttempt(endpoint(), ok, at(11), at(12), policy)).toBeNull();
    expect(endpointAfterAttempt(failing(5, 7), ok, at(11), at(12), policy)).toMatchObject({ consecutive_failures: 0, failing_since: null, next_retry_at: null, version: 2, state: 'enabled', updated_at: at(0) });
  });

  it('given a first failure, the endpoint is failing from now and probed after the first delay', () => {
    expect(endpointAfterAttempt(endpoint(), down, at(49), at(50), policy)).toMatchObject({ consecutive_failures: 1, failing_since: at(50), next_retry_at: at(51), state: 'enabled', updated_at: at(0) });
  });

  it('given failed probes, pushes the next probe out along the delays, then keeps the last one', () => {
    let ep = failing(50, 1);
    const probes: (string | null)[] = [];
    for (const t of [51, 60, 80, 100]) {
      ep = endpointAfterAttempt(ep, down, at(t), at(t), policy) ?? ep;
      probes.push(ep.next_retry_at);
    }
    expect(probes).toEqual([at(55), at(69), at(89), at(109)]);
    expect(ep).toMatchObject({ consecutive_failures: 5, failing_since: at(50) });
  });

  it('given attempts that were in flight when the failure began, counts them as the same outage (no change)', () => {
    expect(endpointAfterAttempt(failing(50, 1), down, at(49), at(52), policy)).toBeNull();
  });

  it('keeps an endpoint enabled through any number of failures short of disableAfterMs, then disables it with the reason', () => {
    let ep = failing(0, 1);
    for (let i = 1; i <= 1000; i++) ep = endpointAfterAttempt(ep, down, at(i * 60), at(i * 60), policy) ?? ep;
    expect(ep).toMatchObject({ state: 'enabled', consecutive_failures: 1001, failing_since: at(0) });
    const last = 5 * DAY - 1;
    expect(endpointAfterAttempt(ep, down, at(last), at(last), policy)).toMatchObject({ state: 'enabled' });
    expect(endpointAfterAttempt(ep, down, at(5 * DAY), at(5 * DAY), policy)).toMatchObject({ state: 'disabled', disabled_reason: 'consecutive_failures', updated_at: at(5 * DAY) });
  });

  it('disables the endpoint at once for a redirect or a target it may not reach', () => {
    for (const disable of ['redirect', 'target_not_allowed'] as const) {
      const after = endpointAfterAttempt(endpoint(), { kind: 'failed', status_code: 302, error: 'redirect', duration_ms: 1, disable }, at(49), at(50), policy);
      expect(after).toMatchObject({ state: 'disabled', disabled_reason: disable, failing_since: at(50) });
    }
  });

  it('keeps an endpoint its owner disabled as the owner left it (no reason added)', () => {
    const after = endpointAfterAttempt(failing(0, 10, { state: 'disabled' }), down, at(6 * DAY), at(6 * DAY), policy);
    expect(after).toMatchObject({ state: 'disabled', disabled_reason: '' });
  });
});

describe('expiry: a delivery is tried for a bounded time', () => {
  it('has expired once maxAgeMs passed since it was planned', () => {
    expect(isExpired(pending(), at(10 + 3 * DAY - 1), policy)).toBe(false);
    expect(isExpired(pending(), at(10 + 3 * DAY), policy)).toBe(true);
  });

  it('fails an expired delivery without an attempt, saying why in its log', () => {
    const expired = expireDelivery(pending({ attempt_count: 2 }), at(10 + 3 * DAY), policy);
    expect(expired).toMatchObject({ state: 'failed', next_attempt_at: null, attempt_count: 2 });
    expect(expired.attempts.at(-1)).toEqual({ attempted_at: at(10 + 3 * DAY), status_code: null, error: 'expired: not delivered within 3 days', duration_ms: 0 });
  });

  it('with the default policy, a receiver that never answers gets a bounded number of attempts (about hourly), then the delivery is failed', () => {
    // The worker's loop over simulated time: attempt when both the delivery and its endpoint are due, fail it once expired.
    let delivery = pending({ created_at: at(0), next_attempt_at: at(0) });
    let ep = endpoint();
    let now = T0;
    for (;;) {
      const due = Math.max(Date.parse(delivery.next_attempt_at ?? ''), Date.parse(ep.next_retry_at ?? at(0)));
      now = Math.min(due, T0 + defaultDeliveryPolicy.maxAgeMs);
      const iso = new Date(now).toISOString();
      if (isExpired(delivery, iso, defaultDeliveryPolicy)) {
        delivery = expireDelivery(delivery, iso, defaultDeliveryPolicy);
        break;
      }
      const sentTo = ep;
      delivery = settleDelivery(delivery, sentTo, down, iso, defaultDeliveryPolicy);
      ep = endpointAfterAttempt(ep, down, iso, iso, defaultDeliveryPolicy) ?? ep;
    }
    expect(delivery.state).toBe('failed');
    expect(delivery.attempt_count).toBeGreaterThan(70);
    expect(delivery.attempt_count).toBeLessThanOrEqual(80);
    expect(ep).toMatchObject({ state: 'enabled', failing_since: at(0) });
  });
});

describe('redeliveryOf', () => {
  it('is a new pending delivery of the same event and body, outside the per-session order, with a lifetime of its own', () => {
    const delivered = { ...pending(), state: 'delivered' as const, attempt_count: 2, own_failures: 1, delivered_at: at(40) };
    const again = redeliveryOf(delivered, 'whd_new', at(60));
    expect(again).toMatchObject({ id: 'whd_new', event_id: delivered.event_id, payload: delivered.payload, subject: null, state: 'pending', attempt_count: 0, own_failures: 0, attempts: [], next_attempt_at: at(60), created_at: at(60), redelivery_of: delivered.id });
  });
});
