import { createHmac } from 'node:crypto';
import Anthropic from '@anthropic-ai/sdk';
import { EVENT_TYPES, SESSION_WEBHOOK_EVENT_TYPES, type RecordedEvent } from '@berth/contracts';
import { signedWebhookHeaders, signingSecretFrom } from './signature';
import { resourceWebhookEvent, sessionWebhookEvents, sessionWebhookTypes } from './webhook-events';

const recorded = (type: RecordedEvent['type'], seq = 4): RecordedEvent => ({ id: `sevt_x_${seq}`, session_id: 'sesn_1', seq, schema_version: 1, command_id: 'cmd_x', occurred_at: '2026-01-01T00:00:00.000Z', type, data: {} } as unknown as RecordedEvent);

describe('session events as webhook events', () => {
  it.each([
    ['SessionCreated', ['session.created']],
    ['TurnStarted', ['session.status_run_started', 'session.running']],
    ['TurnResumed', ['session.status_run_started', 'session.running']],
    ['TurnAwaitingConfirmation', ['session.status_idled', 'session.idled', 'session.requires_action']],
    ['TurnCompleted', ['session.status_idled', 'session.idled']],
    ['TurnFailed', ['session.status_idled', 'session.idled']],
    ['TurnTranscriptPending', ['session.status_rescheduled']],
    ['SessionTerminated', ['session.status_terminated']],
    ['SessionArchived', ['session.archived']],
    ['SessionDeleted', ['session.deleted']],
    ['SessionErrorRaised', ['session.error']],
    ['SessionUpdated', ['session.updated']],
    ['AgentMessageRecorded', []],
  ] as const)('%s → %j', (type, expected) => {
    expect(sessionWebhookTypes(recorded(type))).toEqual(expected);
  });

  it('delivers every session webhook type some event stands for', () => {
    const produced = new Set(EVENT_TYPES.flatMap((t) => sessionWebhookTypes(recorded(t))));
    expect([...produced].sort()).toEqual([...SESSION_WEBHOOK_EVENT_TYPES].sort());
  });

  it('gives each its own stable id, ordered positions and the thin Managed Agents payload', () => {
    const [a, b] = sessionWebhookEvents(recorded('TurnCompleted', 7), 'owner_a');
    expect(a?.event.id).toMatch(/^wevt_[0-9a-f]{32}$/);
    expect(a?.event.id).not.toBe(b?.event.id);
    expect(sessionWebhookEvents(recorded('TurnCompleted', 7), 'owner_a')[0]?.event.id).toBe(a?.event.id);
    expect((a?.position ?? 0) < (b?.position ?? 0)).toBe(true);
    expect(a?.event).toEqual({ id: a?.event.id, created_at: '2026-01-01T00:00:00.000Z', type: 'event', data: { type: 'session.status_idled', id: 'sesn_1', organization_id: 'owner_a', workspace_id: 'default' } });
  });
});

describe('configuration changes as webhook events', () => {
  const at = '2026-01-01T00:00:01.500Z';

  it('carries the thin Managed Agents payload, with vault_id for a credential, and a stable id per change', () => {
    const agent = resourceWebhookEvent({ type: 'agent.updated', id: 'agent_1', ownerId: 'owner_a', at });
    expect(agent.event).toEqual({ id: agent.event.id, created_at: at, type: 'event', data: { type: 'agent.updated', id: 'agent_1', organization_id: 'owner_a', workspace_id: 'default' } });
    expect(resourceWebhookEvent({ type: 'agent.updated', id: 'agent_1', ownerId: 'owner_a', at }).event.id).toBe(agent.event.id);
    expect(resourceWebhookEvent({ type: 'agent.updated', id: 'agent_1', ownerId: 'owner_a', at: '2026-01-01T00:00:02.000Z' }).event.id).not.toBe(agent.event.id);
    expect(resourceWebhookEvent({ type: 'agent.archived', id: 'agent_1', ownerId: 'owner_a', at }).event.id).not.toBe(agent.event.id);
    const credential = resourceWebhookEvent({ type: 'vault_credential.created', id: 'vcrd_1', ownerId: 'owner_a', vaultId: 'vlt_1', at });
    expect(credential.event.data).toEqual({ type: 'vault_credential.created', id: 'vcrd_1', organization_id: 'owner_a', workspace_id: 'default', vault_id: 'vlt_1' });
  });

  it("orders one resource's changes by time, apart from other resources and sessions", () => {
    const first = resourceWebhookEvent({ type: 'environment.created', id: 'env_1', ownerId: 'o', at });
    const later = resourceWebhookEvent({ type: 'environment.updated', id: 'env_1', ownerId: 'o', at: '2026-01-01T00:00:01.501Z' });
    expect([first.subject, later.subject]).toEqual(['env_1', 'env_1']);
    expect(first.position).toBeLessThan(later.position);
    const sameMs = ['vault.created', 'vault.archived', 'vault.deleted'] as const;
    const positions = sameMs.map((type) => resourceWebhookEvent({ type, id: 'vlt_1', ownerId: 'o', at }).position);
    expect([...positions].sort((x, y) => x - y)).toEqual(positions);
    expect(new Set(positions).size).toBe(3);
    const v2 = resourceWebhookEvent({ type: 'agent.updated', id: 'agent_1', ownerId: 'o', at, version: 2 });
    const v3 = resourceWebhookEvent({ type: 'agent.updated', id: 'agent_1', ownerId: 'o', at, version: 3 });
    expect(v2.event.id).not.toBe(v3.event.id);
  });

  it('is what the official SDK parses as the event type it names', () => {
    const event = resourceWebhookEvent({ type: 'vault.archived', id: 'vlt_1', ownerId: 'o', at }).event;
    const parsed = new Anthropic({ apiKey: 'unused' }).beta.webhooks.parseUnverified(JSON.stringify(event));
    expect(parsed.data.type).toBe('vault.archived');
  });
});

describe('signedWebhookHeaders', () => {
  const secret = signingSecretFrom(Buffer.alloc(32, 7));
  const body = JSON.stringify({ id: 'wevt_1', created_at: '2026-01-01T00:00:00Z', type: 'event', data: { type: 'session.status_idled', id: 'sesn_1', organization_id: 'o', workspace_id: 'default' } });

  it('signs the Standard Webhooks way: HMAC-SHA256 over id.timestamp.body with the decoded secret', () => {
    const headers = signedWebhookHeaders(secret, 'wevt_1', 1767225600, body);
    const expected = createHmac('sha256', Buffer.alloc(32, 7)).update(`wevt_1.1767225600.${body}`).digest('base64');
    expect(headers).toEqual({ 'webhook-id': 'wevt_1', 'webhook-timestamp': '1767225600', 'webhook-signature': `v1,${expected}` });
  });

  it('is what the official SDK’s webhooks.unwrap() accepts, and a changed byte is not', () => {
    const client = new Anthropic({ apiKey: 'unused', webhookKey: secret });
    const headers = { ...signedWebhookHeaders(secret, 'wevt_1', Math.floor(Date.now() / 1000), body) };
    expect(client.beta.webhooks.unwrap(body, { headers })).toEqual(JSON.parse(body));
    expect(() => client.beta.webhooks.unwrap(body.replace('sesn_1', 'sesn_2'), { headers })).toThrow();
    expect(() => client.beta.webhooks.unwrap(body, { headers, key: signingSecretFrom(Buffer.alloc(32, 8)) })).toThrow();
  });
});
