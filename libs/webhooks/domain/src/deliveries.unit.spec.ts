import type { RecordedEvent, WebhookDeliveryRecord, WebhookEndpointRecord } from '@berth/contracts';
import { maxAttempts, type DeliveryPolicy } from './delivery-policy';
import { planDeliveries, redeliveryOf, retryDelayMs, settleAttempt, type EventToDeliver } from './deliveries';
import { sessionWebhookEvents } from './webhook-events';

const at = (s: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, s)).toISOString();
const policy: DeliveryPolicy = { retryDelaysMs: [1000, 4000, 9000], jitter: 0, disableAfterFailures: 5, attemptsKept: 3 };

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
  version: 1,
  created_at: at(0),
  updated_at: at(0),
  ...over,
});

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

describe('planDeliveries: which endpoints an event goes to', () => {
  it('given an endpoint that subscribes to two of the three types an idle-for-action event stands for, plans one delivery per type, in order', () => {
    const planned = planDeliveries(toDeliver(idle(3)), [endpoint()], at(11));
    expect(planned.map((d) => [d.event_type, d.subject, d.position])).toEqual([
      ['session.status_idled', 'sesn_1', 48],
      ['session.requires_action', 'sesn_1', 50],
    ]);
    expect(planned.every((d) => d.state === 'pending' && d.next_attempt_at === at(11) && d.attempt_count === 0)).toBe(true);
    expect(JSON.parse(planned[0]?.payload ?? '')).toEqual({
      id: planned[0]?.event_id,
      created_at: at(10),
      type: 'event',
      data: { type: 'session.status_idled', id: 'sesn_1', organization_id: 'owner_a', workspace_id: 'default' },
    });
  });

  it('never plans for another owner’s endpoint, a disabled one, one that does not subscribe, or one created after the event', () => {
    const endpoints = [
      endpoint({ id: 'whk_b', owner_id: 'owner_b' }),
      endpoint({ id: 'whk_off', state: 'disabled' }),
      endpoint({ id: 'whk_other', enabled_events: ['session.created'] }),
      endpoint({ id: 'whk_late', created_at: at(20) }),
    ];
    expect(planDeliveries(toDeliver(idle(3, at(10))), endpoints, at(30))).toEqual([]);
  });

  it('plans the same ids for a redelivered stream message, so enqueueing it again adds nothing', () => {
    const first = planDeliveries(toDeliver(idle(3)), [endpoint()], at(11)).map((d) => [d.id, d.event_id]);
    const again = planDeliveries(toDeliver(idle(3)), [endpoint()], at(99)).map((d) => [d.id, d.event_id]);
    expect(again).toEqual(first);
  });
});

describe('settleAttempt: what an attempt does to a delivery and its endpoint', () => {
  it('given a 2xx, the delivery is delivered and an endpoint’s failure streak ends', () => {
    const { delivery, endpoint: after } = settleAttempt(pending(), endpoint({ consecutive_failures: 3 }), { kind: 'delivered', status_code: 204, duration_ms: 12 }, at(12), policy);
    expect(delivery).toMatchObject({ state: 'delivered', delivered_at: at(12), next_attempt_at: null, attempt_count: 1 });
    expect(delivery.attempts).toEqual([{ attempted_at: at(12), status_code: 204, error: null, duration_ms: 12 }]);
    expect(after).toMatchObject({ consecutive_failures: 0, version: 2, state: 'enabled' });
  });

  it('given a 2xx on a healthy endpoint, the endpoint is not rewritten', () => {
    expect(settleAttempt(pending(), endpoint(), { kind: 'delivered', status_code: 200, duration_ms: 1 }, at(12), policy).endpoint).toBeNull();
  });

  it('given failures, retries after each delay of the policy, then gives up: never more attempts than the policy allows', () => {
    let delivery = pending();
    let ep = endpoint();
    const times: (string | null)[] = [];
    for (let i = 0; i < maxAttempts(policy); i++) {
      const settled = settleAttempt(delivery, ep, { kind: 'failed', status_code: 503, error: 'HTTP 503', duration_ms: 5 }, at(100 + i * 100), policy);
      delivery = settled.delivery;
      ep = settled.endpoint ?? ep;
      times.push(delivery.next_attempt_at);
    }
    expect(times).toEqual([at(101), at(204), at(309), null]);
    expect(delivery).toMatchObject({ state: 'failed', attempt_count: 4 });
    expect(delivery.attempts.map((a) => a.attempted_at)).toEqual([at(200), at(300), at(400)]);
    expect(ep).toMatchObject({ consecutive_failures: 4, state: 'enabled' });
  });

  it('disables the endpoint once its failure streak reaches the threshold, with the reason', () => {
    const { endpoint: after } = settleAttempt(pending(), endpoint({ consecutive_failures: 4 }), { kind: 'failed', status_code: null, error: 'ECONNREFUSED', duration_ms: 1 }, at(50), policy);
    expect(after).toMatchObject({ state: 'disabled', disabled_reason: 'consecutive_failures', consecutive_failures: 5, updated_at: at(50) });
  });

  it('disables the endpoint at once for a redirect or a target it may not reach', () => {
    for (const disable of ['redirect', 'target_not_allowed'] as const) {
      const { endpoint: after, delivery } = settleAttempt(pending(), endpoint(), { kind: 'failed', status_code: 302, error: 'redirect', duration_ms: 1, disable }, at(50), policy);
      expect(after).toMatchObject({ state: 'disabled', disabled_reason: disable });
      expect(delivery.state).toBe('pending');
    }
  });

  it('keeps an endpoint its owner disabled as the owner left it (no reason added)', () => {
    const { endpoint: after } = settleAttempt(pending(), endpoint({ state: 'disabled', consecutive_failures: 10 }), { kind: 'failed', status_code: 500, error: 'HTTP 500', duration_ms: 1 }, at(50), policy);
    expect(after).toMatchObject({ state: 'disabled', disabled_reason: '' });
  });

  it('fails a delivery it did not send (endpoint disabled meanwhile) without counting an attempt', () => {
    const { delivery, endpoint: after } = settleAttempt(pending(), endpoint(), { kind: 'skipped', reason: 'the endpoint is disabled' }, at(50), policy);
    expect(delivery).toMatchObject({ state: 'failed', attempt_count: 0, next_attempt_at: null });
    expect(delivery.attempts.at(-1)?.error).toBe('not sent: the endpoint is disabled');
    expect(after).toBeNull();
  });

  it('spreads retry delays by the jitter, the same for the same delivery and attempt', () => {
    const jittery = { ...policy, jitter: 0.5 };
    const delays = ['whd_1', 'whd_2', 'whd_3', 'whd_4'].map((id) => retryDelayMs({ id }, 1, jittery));
    expect(new Set(delays).size).toBeGreaterThan(1);
    expect(delays.every((d) => d >= 500 && d <= 1500)).toBe(true);
    expect(retryDelayMs({ id: 'whd_1' }, 1, jittery)).toBe(delays[0]);
  });
});

describe('redeliveryOf', () => {
  it('is a new pending delivery of the same event and body, outside the per-session order', () => {
    const delivered = { ...pending(), state: 'delivered' as const, attempt_count: 2, delivered_at: at(40) };
    const again = redeliveryOf(delivered, 'whd_new', at(60));
    expect(again).toMatchObject({ id: 'whd_new', event_id: delivered.event_id, payload: delivered.payload, subject: null, state: 'pending', attempt_count: 0, attempts: [], next_attempt_at: at(60), redelivery_of: delivered.id });
  });
});
