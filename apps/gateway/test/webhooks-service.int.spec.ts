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

/**
 * The gateway as it runs in production (main.ts: the `webhooks` consumer on SESSION_EVT and the
 * delivery worker) with nats-server and the session-kernel process: a session's events reach a
 * receiver signed, and a delivery that failed while the gateway was killed goes out from the
 * outbox once a new gateway runs.
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
    };
    await startGateway();
    store = createStore(storeUrl);
    await store.init();
    const issued = issueApiKey({ ownerId: 'owner_hooks', name: 'test', id: randomIds.next('bk'), now: new Date() });
    await store.apiKeys.insert(issued.record);
    key = issued.key;
  }, 90_000);

  afterAll(async () => {
    await gateway?.stop();
    await kernel?.stop();
    await store?.close();
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('delivers a session’s events, and a delivery a killed gateway left pending goes out from the next one', async () => {
    const received: Received[] = [];
    const listen = (port = 0) =>
      new Promise<Server>((resolve) => {
        const s = createServer((req, res) => {
          let body = '';
          req.on('data', (c: Buffer) => (body += c.toString('utf8')));
          req.on('end', () => {
            received.push({ headers: req.headers, body });
            res.writeHead(204).end();
          });
        });
        s.listen(port, '127.0.0.1', () => resolve(s));
      });
    let receiver = await listen();
    const port = (receiver.address() as { port: number }).port;
    const hook = await call(url, key, 'POST', '/v1/webhooks', { url: `http://127.0.0.1:${port}/hooks`, enabled_events: ['session.created'] });
    expect(hook.status).toBe(200);
    const agent = await call(url, key, 'POST', '/v1/agents', { name: 'a', model: 'claude-sonnet-4-5' });
    const environment = await call(url, key, 'POST', '/v1/environments', { name: 'e' });
    const newSession = async () => (await call(url, key, 'POST', '/v1/sessions', { agent: agent.json.id, environment_id: environment.json.id })).json.id as string;

    const first = await newSession();
    await waitFor(() => received.length === 1, 20_000, 'the first delivery');
    const sdk = new Anthropic({ apiKey: 'unused', webhookKey: hook.json.signing_secret });
    const event = sdk.beta.webhooks.unwrap(received[0]?.body ?? '', { headers: received[0]?.headers as Record<string, string> }) as unknown as { data: { type: string; id: string } };
    expect(event.data).toMatchObject({ type: 'session.created', id: first });

    // The receiver goes away: the next delivery fails and waits for its retry (5 s by the default policy).
    await new Promise((resolve) => receiver.close(resolve));
    const second = await newSession();
    const deliveries = async () => (await store.webhookDeliveries.list('owner_hooks', hook.json.id, { limit: 10, page: null })).data;
    await waitFor(async () => (await deliveries()).some((d) => d.attempt_count === 1 && d.state === 'pending'), 20_000, 'a failed first attempt');
    await gateway.kill();
    receiver = await listen(port);
    await startGateway();
    await waitFor(() => received.length === 2, 30_000, 'the retried delivery from the new gateway');
    const retried = sdk.beta.webhooks.unwrap(received[1]?.body ?? '', { headers: received[1]?.headers as Record<string, string> }) as unknown as { data: { id: string } };
    expect(retried.data.id).toBe(second);
    await waitFor(async () => (await deliveries()).every((d) => d.state === 'delivered'), 10_000, 'both deliveries settled');
    expect((await deliveries()).map((d) => d.attempt_count).sort()).toEqual([1, 2]);
    // The new gateway made the one attempt that went through, and says so on /metrics.
    const metrics = await (await fetch(`${url}/metrics`)).text();
    expect(metrics).toMatch(/^berth_webhook_attempts_total\{[^}]*outcome="delivered"[^}]*\} 1$/m);
    expect(metrics).not.toMatch(/^berth_webhook_attempts_total\{[^}]*outcome="failed"/m);
    await new Promise((resolve) => receiver.close(resolve));
  }, 120_000);
});
