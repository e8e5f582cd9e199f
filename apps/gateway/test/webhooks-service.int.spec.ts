import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import { randomIds } from '@berth/core';
import type { BerthStore } from '@berth/ports';
import { createStore } from '@berth/store';
import { freePort, startNatsServer, type NatsServerHandle } from '@berth/testing';
import { issueApiKey } from '../src/auth/api-key';
import { call } from './support/api';
import { startKernelService, startServiceProcess, type ServiceProcess } from './support/service-process';
import { waitFor } from './support/wait-for';

type Received = { headers: IncomingHttpHeaders; body: string };
type Unwrapped = { id: string; data: { type: string; id: string; organization_id: string } };

/** A loopback receiver that can go away and come back on the same port; every request it takes is kept, in arrival order. */
class Receiver {
  readonly received: Received[] = [];
  private server: Server | null = null;
  port = 0;

  async open(): Promise<this> {
    const server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString('utf8')));
      req.on('end', () => {
        this.received.push({ headers: req.headers, body });
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(this.port, '127.0.0.1', resolve));
    this.port = (server.address() as { port: number }).port;
    this.server = server;
    return this;
  }

  async close(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (server) await new Promise((resolve) => server.close(resolve));
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}/hooks`;
  }
}

/**
 * The gateway as it runs in production (main.ts: the `webhooks` consumer on SESSION_EVT and the
 * delivery worker) with nats-server and the session-kernel process: a session's events reach a
 * receiver signed; a delivery that failed while the gateway was killed goes out from the outbox
 * once a new gateway runs; and a receiver that is down for a while gets every event once it is
 * back. Retries are quickened through the gateway's own settings (BERTH_WEBHOOK_RETRY_DELAYS_MS).
 */
describe('webhooks through nats-server, the kernel and the gateway service', () => {
  let server: NatsServerHandle;
  let dir: string;
  let store: BerthStore;
  let kernel: ServiceProcess;
  let gateway: ServiceProcess;
  let env: Record<string, string>;
  let url: string;
  let key: string;
  let otherKey: string;

  const startGateway = async () => {
    gateway = await startServiceProcess('gateway', env, /"msg":"ready: http/);
  };

  beforeAll(async () => {
    server = await startNatsServer();
    dir = mkdtempSync(join(tmpdir(), 'berth-webhooks-'));
    const storeUrl = `sqlite:${join(dir, 'berth.db')}`;
    kernel = await startKernelService({ ...server.env('session-kernel'), BERTH_STORE_URL: storeUrl });
    const port = await freePort();
    url = `http://127.0.0.1:${port}`;
    env = {
      ...server.env('gateway'),
      BERTH_STORE_URL: storeUrl,
      PORT: String(port),
      BERTH_SECRET_KEYS: `k1:${randomBytes(32).toString('base64')}`,
      BERTH_WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      BERTH_WEBHOOK_TICK_MS: '50',
      BERTH_WEBHOOK_TIMEOUT_MS: '2000',
      BERTH_WEBHOOK_LEASE_MS: '3000',
      BERTH_WEBHOOK_RETRY_DELAYS_MS: '20,40',
    };
    await startGateway();
    store = createStore(storeUrl);
    await store.init();
    const keyOf = async (owner: string) => {
      const issued = issueApiKey({ ownerId: owner, name: 'test', id: randomIds.next('bk'), now: new Date() });
      await store.apiKeys.insert(issued.record);
      return issued.key;
    };
    key = await keyOf('owner_hooks');
    otherKey = await keyOf('owner_other');
  }, 90_000);

  afterAll(async () => {
    await gateway?.stop();
    await kernel?.stop();
    await store?.close();
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  /** A new session of `apiKey`'s owner (its own agent and environment). */
  const newSession = async (apiKey: string) => {
    const agent = await call(url, apiKey, 'POST', '/v1/agents', { name: 'a', model: 'claude-sonnet-4-5' });
    const environment = await call(url, apiKey, 'POST', '/v1/environments', { name: 'e' });
    const created = await call(url, apiKey, 'POST', '/v1/sessions', { agent: agent.json.id, environment_id: environment.json.id });
    expect(created.status).toBe(200);
    return created.json.id as string;
  };
  const sdk = (secret: string) => new Anthropic({ apiKey: 'unused', webhookKey: secret });
  const unwrap = (secret: string, r: Received) => sdk(secret).beta.webhooks.unwrap(r.body, { headers: r.headers as Record<string, string> }) as unknown as Unwrapped;

  it('delivers a session’s events, and a delivery a killed gateway left pending goes out from the next one', async () => {
    const receiver = await new Receiver().open();
    const hook = await call(url, key, 'POST', '/v1/webhooks', { url: receiver.url, enabled_events: ['session.created'] });
    expect(hook.status).toBe(200);

    const first = await newSession(key);
    await waitFor(() => receiver.received.length === 1, 20_000, 'the first delivery');
    expect(unwrap(hook.json.signing_secret, receiver.received[0] as Received).data).toMatchObject({ type: 'session.created', id: first });

    // The receiver goes away: the next delivery fails and waits for its retry.
    await receiver.close();
    const second = await newSession(key);
    const deliveries = async () => (await store.webhookDeliveries.list('owner_hooks', hook.json.id, { limit: 10, page: null })).data;
    await waitFor(async () => (await deliveries()).some((d) => d.attempt_count >= 1 && d.state === 'pending'), 20_000, 'a failed first attempt');
    await gateway.kill();
    await receiver.open();
    await startGateway();
    await waitFor(() => receiver.received.length === 2, 30_000, 'the retried delivery from the new gateway');
    expect(unwrap(hook.json.signing_secret, receiver.received[1] as Received).data.id).toBe(second);
    await waitFor(async () => (await deliveries()).every((d) => d.state === 'delivered'), 10_000, 'both deliveries settled');
    // The new gateway made the one attempt that went through, and says so on /metrics.
    const metrics = await (await fetch(`${url}/metrics`)).text();
    expect(metrics).toMatch(/^berth_webhook_attempts_total\{[^}]*outcome="delivered"[^}]*\} 1$/m);
    expect(metrics).not.toMatch(/^berth_webhook_attempts_total\{[^}]*outcome="failed"/m);
    await receiver.close();
    expect((await call(url, key, 'DELETE', `/v1/webhooks/${hook.json.id}`)).status).toBe(200);
  }, 120_000);

  it('a receiver down through more than 40 failed attempts in a row gets every event of every session once it is back, in order per session; another owner’s endpoint gets none of them', async () => {
    const types = ['session.created', 'session.updated', 'session.archived'];
    const mine = await new Receiver().open();
    const theirs = await new Receiver().open();
    const hook = await call(url, key, 'POST', '/v1/webhooks', { url: mine.url, enabled_events: types });
    const other = await call(url, otherKey, 'POST', '/v1/webhooks', { url: theirs.url, enabled_events: types });
    await mine.close();

    // Three sessions with three events each, while the receiver is down.
    const sessions = [await newSession(key), await newSession(key), await newSession(key)];
    const retitle = async (id: string, title: string) => expect((await call(url, key, 'POST', `/v1/sessions/${id}`, { title })).status).toBe(200);
    for (const id of sessions) for (const title of ['one', 'two']) await retitle(id, title);
    const theirSession = await newSession(otherKey);
    expect((await call(url, otherKey, 'POST', `/v1/sessions/${theirSession}`, { title: 'theirs' })).status).toBe(200);

    // Far past the 20 failures in a row that used to disable an endpoint (and so lose every later event): it is still enabled, failing, retrying.
    const endpoint = () => store.webhookEndpoints.getById(hook.json.id);
    await waitFor(async () => ((await endpoint())?.consecutive_failures ?? 0) > 40, 60_000, 'more than 40 failed attempts');
    const failing = (await call(url, key, 'GET', `/v1/webhooks/${hook.json.id}`)).json;
    expect(failing).toMatchObject({ state: 'enabled', disabled_reason: '' });
    expect(typeof failing.failing_since).toBe('string');
    expect(typeof failing.next_retry_at).toBe('string');

    // More events while it is failing: they are planned too, and wait behind the earlier ones.
    for (const id of sessions) {
      await retitle(id, 'three');
      expect((await call(url, key, 'POST', `/v1/sessions/${id}/archive`)).status).toBe(200);
    }
    const log = async () => (await store.webhookDeliveries.list('owner_hooks', hook.json.id, { limit: 100, page: null })).data;
    await waitFor(async () => (await log()).length === 15, 30_000, 'fifteen deliveries planned');
    expect((await log()).every((d) => d.state === 'pending')).toBe(true);
    // One delivery at a time was tried while it was down (the endpoint's probe), not every one of them.
    const attempts = (await log()).map((d) => d.attempt_count);
    expect(attempts.filter((n) => n > 0).length).toBeLessThan(attempts.length);

    await mine.open();
    const distinct = () => new Set(mine.received.map((r) => r.headers['webhook-id'])).size;
    await waitFor(() => distinct() === 15, 60_000, 'every event at the receiver');
    await waitFor(async () => (await log()).every((d) => d.state === 'delivered'), 10_000, 'every delivery settled');

    // Each verified by the SDK; per session, in the order it happened (the first arrival of each event).
    const events = mine.received.map((r) => unwrap(hook.json.signing_secret, r));
    expect(mine.received.map((r) => r.headers['webhook-id'])).toEqual(events.map((e) => e.id));
    const firstArrivals = events.filter((e, i) => events.findIndex((f) => f.id === e.id) === i);
    for (const id of sessions) {
      expect(firstArrivals.filter((e) => e.data.id === id).map((e) => e.data.type)).toEqual(['session.created', 'session.updated', 'session.updated', 'session.updated', 'session.archived']);
    }
    expect(events.every((e) => e.data.organization_id === 'owner_hooks' && e.data.id !== theirSession)).toBe(true);
    expect((await call(url, key, 'GET', `/v1/webhooks/${hook.json.id}`)).json).toMatchObject({ state: 'enabled', failing_since: null, next_retry_at: null });

    // The other owner's endpoint got its own two events and nothing of ours.
    await waitFor(() => theirs.received.length >= 2, 20_000, 'the other owner’s events');
    const theirEvents = theirs.received.map((r) => unwrap(other.json.signing_secret, r));
    expect(new Set(theirEvents.map((e) => e.data.id))).toEqual(new Set([theirSession]));
    expect(theirEvents.every((e) => e.data.organization_id === 'owner_other')).toBe(true);
    expect(() => unwrap(other.json.signing_secret, mine.received[0] as Received)).toThrow();
    await Promise.all([mine.close(), theirs.close()]);
  }, 180_000);
});
