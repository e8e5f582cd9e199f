import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import Anthropic from '@anthropic-ai/sdk';
import type { WebhookDeliveryRecord } from '@berth/contracts';
import { startGateway, type GatewayHarness } from './support/gateway-harness';
import { call, seedSession, userMessage } from './support/api';
import { waitFor } from './support/wait-for';
import { WebhookDispatcher } from '../src/webhooks/delivery/webhook-dispatcher';
import { HttpWebhookSender } from '../src/webhooks/delivery/webhook-sender';
import { silentLogger } from '@berth/testing';
import { systemClock } from '@berth/core';
import { webhookMetrics } from '@berth/telemetry';
import { Registry } from 'prom-client';

type Received = Readonly<{ headers: IncomingHttpHeaders; body: string }>;

/** A loopback webhook receiver: answers each request with the next status of `answers` (the last one repeats). */
async function receiver(answers: number[] = [204]) {
  const received: Received[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => {
      received.push({ headers: req.headers, body });
      res.writeHead(answers[Math.min(received.length - 1, answers.length - 1)] ?? 204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return { url: `http://127.0.0.1:${port}/hooks`, port, received, close: () => new Promise((resolve) => server.close(resolve)) };
}

/** What the official SDK makes of a delivery, verified with the endpoint's signing secret. */
const unwrap = (secret: string, r: Received) =>
  new Anthropic({ apiKey: 'unused', webhookKey: secret }).beta.webhooks.unwrap(r.body, { headers: r.headers as Record<string, string> }) as unknown as { id: string; type: string; data: { type: string; id: string; organization_id: string } };

describe('webhooks: endpoints, signed at-least-once delivery, delivery log', () => {
  let gw: GatewayHarness;
  beforeAll(async () => {
    gw = await startGateway();
  });
  afterAll(() => gw.close());

  it('answers the signing secret once; it is never read back, nor stored in the clear', async () => {
    const created = await call(gw.url, gw.keyA, 'POST', '/v1/webhooks', { url: 'https://hooks.example.com/a', enabled_events: ['session.status_idled'], name: 'ci' });
    expect(created.status).toBe(200);
    expect(created.json).toMatchObject({ type: 'webhook_endpoint', url: 'https://hooks.example.com/a', name: 'ci', state: 'enabled', enabled_events: ['session.status_idled'] });
    const secret = created.json.signing_secret as string;
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const got = await call(gw.url, gw.keyA, 'GET', `/v1/webhooks/${created.json.id}`);
    const listed = await call(gw.url, gw.keyA, 'GET', '/v1/webhooks');
    const stored = await gw.store.webhookEndpoints.get('owner_a', created.json.id);
    for (const text of [got.text, listed.text, JSON.stringify(stored)]) expect(text).not.toContain(secret.slice(6));
    expect(got.json).not.toHaveProperty('signing_secret');
    const rotated = await call(gw.url, gw.keyA, 'POST', `/v1/webhooks/${created.json.id}/regenerate_signing_secret`);
    expect(rotated.json.signing_secret).toMatch(/^whsec_/);
    expect(rotated.json.signing_secret).not.toBe(secret);
  });

  it('refuses bad input with stable codes: unknown event types, no types, a URL with credentials', async () => {
    const bad = [
      { url: 'https://h.example.com', enabled_events: ['session.budget_reached'] },
      { url: 'https://h.example.com', enabled_events: [] },
      { url: 'https://user:pw@h.example.com', enabled_events: ['session.created'] },
      { url: 'ftp://h.example.com', enabled_events: ['session.created'] },
    ];
    for (const body of bad) {
      const res = await call(gw.url, gw.keyA, 'POST', '/v1/webhooks', body);
      expect([res.status, res.json.error.code]).toEqual([400, 'VALIDATION_ERROR']);
    }
  });

  it('delivers the session’s events signed, in order, verified by the SDK’s unwrap(); another owner’s endpoint gets none of them', async () => {
    const mine = await receiver();
    const theirs = await receiver();
    const a = await call(gw.url, gw.keyA, 'POST', '/v1/webhooks', { url: mine.url, enabled_events: ['session.created', 'session.status_run_started', 'session.status_idled', 'session.idled'] });
    const b = await call(gw.url, gw.keyB, 'POST', '/v1/webhooks', { url: theirs.url, enabled_events: ['session.created', 'session.status_run_started', 'session.status_idled', 'session.idled'] });
    const { sessionId } = await seedSession(gw.url, gw.keyA);
    await call(gw.url, gw.keyA, 'POST', `/v1/sessions/${sessionId}/events`, userMessage('hi'));
    await waitFor(() => mine.received.length >= 4, 10_000, 'four deliveries');

    const events = mine.received.map((r) => unwrap(a.json.signing_secret, r));
    expect(events.map((e) => e.data.type)).toEqual(['session.created', 'session.status_run_started', 'session.status_idled', 'session.idled']);
    expect(events.every((e) => e.type === 'event' && e.data.id === sessionId && e.data.organization_id === 'owner_a' && /^wevt_/.test(e.id))).toBe(true);
    expect(mine.received.map((r) => r.headers['webhook-id'])).toEqual(events.map((e) => e.id));
    expect(() => unwrap(b.json.signing_secret, mine.received[0] as Received)).toThrow();

    const log = await call(gw.url, gw.keyA, 'GET', `/v1/webhooks/${a.json.id}/deliveries`);
    expect(log.json.data).toHaveLength(4);
    expect(log.json.data.every((d: { state: string; attempts: { status_code: number }[] }) => d.state === 'delivered' && d.attempts[0]?.status_code === 204)).toBe(true);
    expect(theirs.received).toEqual([]);
    expect((await call(gw.url, gw.keyB, 'GET', `/v1/webhooks/${b.json.id}/deliveries`)).json.data).toEqual([]);
    await Promise.all([mine.close(), theirs.close()]);
  });

  it('delivers agent, environment, vault and credential changes signed, each resource in order; another owner’s endpoint gets none', async () => {
    const types = ['agent.created', 'agent.updated', 'agent.archived', 'environment.created', 'environment.updated', 'environment.archived', 'environment.deleted', 'vault.created', 'vault.archived', 'vault.deleted', 'vault_credential.created', 'vault_credential.archived', 'vault_credential.deleted'];
    const mine = await receiver();
    const theirs = await receiver();
    const a = await call(gw.url, gw.keyA, 'POST', '/v1/webhooks', { url: mine.url, enabled_events: types });
    await call(gw.url, gw.keyB, 'POST', '/v1/webhooks', { url: theirs.url, enabled_events: types });
    const client = new Anthropic({ apiKey: gw.keyA, baseURL: gw.url, maxRetries: 0 });

    const agent = await client.beta.agents.create({ name: 'hooked', model: 'claude-sonnet-4-6' });
    await client.beta.agents.update(agent.id, { version: agent.version, system: 'changed' });
    await client.beta.agents.archive(agent.id);
    const env = await client.beta.environments.create({ name: 'hooked' });
    await client.beta.environments.update(env.id, { name: 'hooked-2' });
    await client.beta.environments.archive(env.id);
    await client.beta.environments.delete(env.id);
    const vault = await client.beta.vaults.create({ display_name: 'hooked' });
    const credential = await client.beta.vaults.credentials.create(vault.id, { auth: { type: 'static_bearer', mcp_server_url: 'https://mcp.example.com/', token: 'tok-hooked' } });
    await client.beta.vaults.credentials.archive(credential.id, { vault_id: vault.id });
    await client.beta.vaults.credentials.delete(credential.id, { vault_id: vault.id });
    await client.beta.vaults.archive(vault.id);
    await client.beta.vaults.delete(vault.id);
    await waitFor(() => mine.received.length >= 13, 10_000, 'thirteen deliveries');

    const events = mine.received.map((r) => unwrap(a.json.signing_secret, r) as unknown as { data: { type: string; id: string; organization_id: string; vault_id?: string } });
    const of = (id: string) => events.filter((e) => e.data.id === id).map((e) => e.data.type);
    expect(of(agent.id)).toEqual(['agent.created', 'agent.updated', 'agent.archived']);
    expect(of(env.id)).toEqual(['environment.created', 'environment.updated', 'environment.archived', 'environment.deleted']);
    expect(of(vault.id)).toEqual(['vault.created', 'vault.archived', 'vault.deleted']);
    expect(of(credential.id)).toEqual(['vault_credential.created', 'vault_credential.archived', 'vault_credential.deleted']);
    expect(events.filter((e) => e.data.type.startsWith('vault_credential.')).every((e) => e.data.vault_id === vault.id)).toBe(true);
    expect(events.every((e) => e.data.organization_id === 'owner_a')).toBe(true);
    expect(mine.received.map((r) => r.body).join('\n')).not.toContain('tok-hooked');
    expect(theirs.received).toEqual([]);
    await Promise.all([mine.close(), theirs.close()]);
  });

  it('retries a failed attempt with the same event id until the receiver takes it, then redelivers on request', async () => {
    const flaky = await receiver([500, 503, 200]);
    const hook = await call(gw.url, gw.keyA, 'POST', '/v1/webhooks', { url: flaky.url, enabled_events: ['session.created'] });
    await seedSession(gw.url, gw.keyA);
    const delivered = async () => (await call(gw.url, gw.keyA, 'GET', `/v1/webhooks/${hook.json.id}/deliveries?state=delivered`)).json.data[0];
    await waitFor(async () => (await delivered()) !== undefined, 10_000, 'the delivery to go through');
    const d = await delivered();
    expect(d).toMatchObject({ attempt_count: 3, state: 'delivered' });
    expect(d.attempts.map((x: { status_code: number }) => x.status_code)).toEqual([500, 503, 200]);
    expect(new Set(flaky.received.map((r) => r.headers['webhook-id']))).toEqual(new Set([d.event_id]));

    const again = await call(gw.url, gw.keyA, 'POST', `/v1/webhooks/${hook.json.id}/deliveries/${d.id}/redeliver`);
    expect(again.json).toMatchObject({ redelivery_of: d.id, event_id: d.event_id, state: 'pending' });
    await waitFor(() => flaky.received.length === 4, 10_000, 'the redelivery');
    expect(unwrap(hook.json.signing_secret, flaky.received[3] as Received).id).toBe(d.event_id);
    await flaky.close();
  });

  it('holds deliveries while an endpoint is disabled, and sends them, in order, once it is enabled again', async () => {
    const r = await receiver();
    const hook = await call(gw.url, gw.keyA, 'POST', '/v1/webhooks', { url: r.url, enabled_events: ['session.created', 'session.updated'] });
    await call(gw.url, gw.keyA, 'POST', `/v1/webhooks/${hook.json.id}`, { state: 'disabled' });
    const { sessionId } = await seedSession(gw.url, gw.keyA);
    for (const title of ['one', 'two']) expect((await call(gw.url, gw.keyA, 'POST', `/v1/sessions/${sessionId}`, { title })).status).toBe(200);
    const log = async () => (await call(gw.url, gw.keyA, 'GET', `/v1/webhooks/${hook.json.id}/deliveries`)).json.data as { state: string }[];
    await waitFor(async () => (await log()).length === 3, 10_000, 'three deliveries planned while disabled');
    // A worker pass after they were planned sends nothing: they wait, pending.
    await gw.dispatcher.tick();
    expect(r.received).toEqual([]);
    expect((await log()).map((d) => d.state)).toEqual(['pending', 'pending', 'pending']);

    await call(gw.url, gw.keyA, 'POST', `/v1/webhooks/${hook.json.id}`, { state: 'enabled' });
    await waitFor(() => r.received.length === 3, 10_000, 'the held deliveries');
    const events = r.received.map((x) => unwrap(hook.json.signing_secret, x).data);
    expect(events).toEqual([
      expect.objectContaining({ type: 'session.created', id: sessionId }),
      expect.objectContaining({ type: 'session.updated', id: sessionId }),
      expect.objectContaining({ type: 'session.updated', id: sessionId }),
    ]);
    await r.close();
  });
});

describe('webhook delivery lifetime', () => {
  it('fails a delivery not delivered within the policy’s maximum age, says why, sends nothing more, and redelivers it on request', async () => {
    const own = await startGateway({ turnRunner: false, deliveryPolicy: { maxAgeMs: 400 } });
    const down = await receiver([500]);
    const hook = await call(own.url, own.keyA, 'POST', '/v1/webhooks', { url: down.url, enabled_events: ['session.created'] });
    await seedSession(own.url, own.keyA);
    const failed = async () => (await call(own.url, own.keyA, 'GET', `/v1/webhooks/${hook.json.id}/deliveries?state=failed`)).json.data[0];
    await waitFor(async () => (await failed()) !== undefined, 10_000, 'the delivery to expire');
    const d = await failed();
    expect(d).toMatchObject({ state: 'failed', next_attempt_at: null });
    expect(d.attempts.at(-1)).toMatchObject({ status_code: null, error: 'expired: not delivered within 400 ms' });
    // Every attempt reached the receiver, and none comes after the expiry: no loop.
    expect(down.received).toHaveLength(d.attempt_count);
    await own.dispatcher.tick();
    expect(down.received).toHaveLength(d.attempt_count);

    const again = await call(own.url, own.keyA, 'POST', `/v1/webhooks/${hook.json.id}/deliveries/${d.id}/redeliver`);
    expect(again.json).toMatchObject({ redelivery_of: d.id, state: 'pending' });
    await waitFor(() => down.received.length > d.attempt_count, 10_000, 'the redelivery');
    await down.close();
    await own.close();
  }, 30_000);
});

describe('webhook delivery across a worker crash', () => {
  it('a delivery a crashed worker held is sent by the next one once its lease runs out (durable outbox)', async () => {
    const own = await startGateway({ turnRunner: false });
    const r = await receiver();
    const hook = await call(own.url, own.keyA, 'POST', '/v1/webhooks', { url: r.url, enabled_events: ['session.created'] });
    await own.dispatcher.stop();
    await seedSession(own.url, own.keyA);
    const list = async (): Promise<WebhookDeliveryRecord[]> => (await own.store.webhookDeliveries.list('owner_a', hook.json.id, { limit: 10, page: null })).data as WebhookDeliveryRecord[];
    await waitFor(async () => (await list()).length === 1, 5_000, 'the delivery to be planned');
    // A worker claims it and dies mid-attempt: it never answers.
    const hung = new WebhookDispatcher({
      endpoints: own.store.webhookEndpoints,
      deliveries: own.store.webhookDeliveries,
      secrets: { seal: () => ({ key_id: '', iv: '', ciphertext: '', tag: '' }), open: () => 'whsec_AAAA' },
      sender: { send: () => new Promise(() => undefined) },
      clock: systemClock,
      log: silentLogger,
      metrics: webhookMetrics(new Registry()),
      options: { policy: { retryDelaysMs: [], jitter: 0, maxAgeMs: 60_000, disableAfterMs: 60_000, attemptsKept: 5 }, leaseMs: 300, batchSize: 8, retentionMs: 1 },
    });
    void hung.tick();
    await waitFor(async () => (await list())[0]?.lease !== null, 5_000, 'the hung worker to claim it');
    own.dispatcher.start(20);
    // The receiver has the request before the worker records the attempt: wait for the record.
    await waitFor(async () => (await list())[0]?.state === 'delivered', 10_000, 'the next worker to deliver it');
    expect(r.received).toHaveLength(1);
    expect((await list())[0]).toMatchObject({ state: 'delivered', attempt_count: 1 });
    expect(r.received).toHaveLength(1);
    await r.close();
    await own.close();
  }, 30_000);
});

describe('webhook targets: the platform’s own network is off limits unless the operator allows it', () => {
  let gw: GatewayHarness;
  beforeAll(async () => {
    gw = await startGateway({ allowPrivateWebhookTargets: false });
  });
  afterAll(() => gw.close());

  it.each(['http://127.0.0.1:4222/', 'http://localhost:8080/x', 'http://[::1]/', 'http://169.254.169.254/latest/meta-data', 'http://10.0.0.7/', 'http://nats:4222/'])('refuses to register %s', async (url) => {
    const res = await call(gw.url, gw.keyA, 'POST', '/v1/webhooks', { url, enabled_events: ['session.created'] });
    expect([res.status, res.json.error.code]).toEqual([400, 'WEBHOOK_TARGET_NOT_ALLOWED']);
  });

  it('refuses to move an endpoint there', async () => {
    const hook = await call(gw.url, gw.keyA, 'POST', '/v1/webhooks', { url: 'https://hooks.example.com/x', enabled_events: ['session.created'] });
    const res = await call(gw.url, gw.keyA, 'POST', `/v1/webhooks/${hook.json.id}`, { url: 'http://127.0.0.1:9/' });
    expect(res.json.error.code).toBe('WEBHOOK_TARGET_NOT_ALLOWED');
  });

  it('never connects to a public-looking name that resolves to loopback, and disables the endpoint', async () => {
    const r = await receiver();
    const sender = new HttpWebhookSender({ policy: { allowPrivateTargets: false }, timeoutMs: 2_000, resolve: async () => [{ address: '127.0.0.1', family: 4 }] });
    const outcome = await sender.send(`http://hooks.example.test:${r.port}/x`, {}, '{}');
    expect(outcome).toMatchObject({ kind: 'failed', status_code: null, disable: 'target_not_allowed' });
    expect(r.received).toEqual([]);
    const allowed = new HttpWebhookSender({ policy: { allowPrivateTargets: true }, timeoutMs: 2_000, resolve: async () => [{ address: '127.0.0.1', family: 4 }] });
    expect(await allowed.send(`http://hooks.example.test:${r.port}/x`, {}, '{}')).toMatchObject({ kind: 'delivered', status_code: 204 });
    await r.close();
  });

  it('does not follow a redirect', async () => {
    const moved = createServer((req, res) => req.resume().on('end', () => res.writeHead(307, { location: 'http://127.0.0.1:4222/' }).end()));
    await new Promise<void>((resolve) => moved.listen(0, '127.0.0.1', resolve));
    const sender = new HttpWebhookSender({ policy: { allowPrivateTargets: true }, timeoutMs: 2_000 });
    expect(await sender.send(`http://127.0.0.1:${(moved.address() as { port: number }).port}/`, {}, '{}')).toMatchObject({ kind: 'failed', status_code: 307, disable: 'redirect' });
    await new Promise((resolve) => moved.close(resolve));
  });
});
