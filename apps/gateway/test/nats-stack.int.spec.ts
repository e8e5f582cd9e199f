import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import { SandboxManagerQueries, Subjects, parseRecordedEvent, toPublicEvent, type RecordedEvent } from '@berth/contracts';
import { randomIds, systemClock } from '@berth/core';
import { JetStreamPublisher, NatsCommandBus, readIssuerMaterial, SubscriberIssuer } from '@berth/nats';
import type { BerthStore } from '@berth/ports';
import { createStore } from '@berth/store';
import { BerthEventSubscriber, type ReceivedEvent, type SubscriberCredential } from '@berth/subscriber';
import { silentLogger, startNatsServer, type NatsServerHandle } from '@berth/testing';
import { jetstream } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { createGatewayApp } from '../src/app/create-gateway-app';
import { issueApiKey } from '../src/auth/api-key';
import { NatsSandboxProbe } from '../src/sessions/nats-sandbox-probe';
import { NatsEventFeed } from '../src/stream/nats-event-feed';
import { call, userMessage } from './support/api';
import { FakeTurnRunner } from './support/fake-turn-runner';
import { startKernelService, type ServiceProcess } from './support/service-process';
import { openSse } from './support/sse-client';
import { waitFor } from './support/wait-for';

/**
 * The whole path the brief draws: SDK → gateway → JetStream SESSION_CMD → session-kernel process →
 * SQLite → outbox → SESSION_EVT → gateway SSE. A fake turn runner (over NATS) answers turns.
 */
describe('gateway + session-kernel + nats-server', () => {
  let server: NatsServerHandle;
  let dir: string;
  let kernel: ServiceProcess;
  let nc: NatsConnection;
  let bus: NatsCommandBus;
  let store: BerthStore;
  let app: NestExpressApplication;
  let runner: FakeTurnRunner;
  let url: string;
  let key: string;
  let issuer: SubscriberIssuer;
  const apiKeyOf = async (owner: string) => {
    const issued = issueApiKey({ ownerId: owner, name: 'test', id: randomIds.next('bk'), now: new Date() });
    await store.apiKeys.insert(issued.record);
    return issued.key;
  };

  beforeAll(async () => {
    server = await startNatsServer();
    dir = mkdtempSync(join(tmpdir(), 'berth-gateway-'));
    const storeUrl = `sqlite:${join(dir, 'berth.db')}`;
    kernel = await startKernelService({ ...server.env('session-kernel'), BERTH_STORE_URL: storeUrl });
    store = createStore(storeUrl);
    await store.init();
    nc = await server.connect();
    bus = new NatsCommandBus(nc, new JetStreamPublisher(jetstream(nc)), { defaultTimeoutMs: 10_000 });
    issuer = await SubscriberIssuer.connect(server.url, readIssuerMaterial(server.issuerFile));
    app = await createGatewayApp({
      store,
      commandBus: bus,
      eventFeed: new NatsEventFeed(nc),
      sandboxProbe: new NatsSandboxProbe(nc, systemClock, 300),
      subscriberIssuer: issuer,
      readiness: [{ name: 'nats', check: async () => void (await nc.flush()) }],
      log: silentLogger,
    });
    await app.listen(0, '127.0.0.1');
    url = `http://127.0.0.1:${(app.getHttpServer().address() as { port: number }).port}`;
    runner = new FakeTurnRunner(bus, (listener) => {
      const sub = nc.subscribe(Subjects.allEvents, { callback: (err, msg) => {
          if (!err) listener(parseRecordedEvent(msg.json()));
        },
      });
      return () => sub.unsubscribe();
    });
    key = await apiKeyOf('owner_nats');
  }, 60_000);

  afterAll(async () => {
    runner?.close();
    await app?.close();
    bus?.close();
    await issuer?.close();
    await nc?.close();
    await kernel?.stop();
    await store?.close();
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('runs a session end to end with the official SDK', async () => {
    const client = new Anthropic({ apiKey: key, baseURL: url, maxRetries: 0 });
    const agent = await client.beta.agents.create({ name: 'nats', model: 'claude-sonnet-4-5' });
    const env = await client.beta.environments.create({ name: 'nats' });
    const session = await client.beta.sessions.create({ agent: agent.id, environment_id: env.id });
    const stream = await client.beta.sessions.events.stream(session.id);
    const seen: string[] = [];
    const reading = (async () => {
      for await (const event of stream) {
        seen.push(event.type);
        if (event.type === 'session.status_idle') break;
      }
    })();
    await client.beta.sessions.events.send(session.id, { events: [{ type: 'user.message', content: [{ type: 'text', text: 'over nats' }] }] });
    await reading;
    expect(seen).toEqual(expect.arrayContaining(['user.message', 'session.status_running', 'agent.message', 'session.status_idle']));

    const listed = [];
    for await (const e of client.beta.sessions.events.list(session.id)) listed.push(e);
    expect(listed).toEqual((await store.journal.readEvents(session.id)).map(toPublicEvent));
    expect((await client.beta.sessions.archive(session.id)).archived_at).not.toBeNull();
    expect(await client.beta.sessions.delete(session.id)).toEqual({ id: session.id, type: 'session_deleted' });
  }, 30_000);

  it('replays with Last-Event-ID and tails live events from SESSION_EVT', async () => {
    const agent = await call(url, key, 'POST', '/v1/agents', { name: 'a', model: 'm' });
    const env = await call(url, key, 'POST', '/v1/environments', { name: 'e' });
    const session = await call(url, key, 'POST', '/v1/sessions', { agent: agent.json.id, environment_id: env.json.id });
    const id = session.json.id as string;
    await call(url, key, 'POST', `/v1/sessions/${id}/events`, userMessage('first'));
    await waitFor(async () => (await store.journal.readEvents(id)).some((e) => e.type === 'TurnCompleted'), 10_000, 'first turn');
    const conn = await openSse(`${url}/v1/sessions/${id}/events/stream`, { 'x-api-key': key, 'last-event-id': '2' });
    await call(url, key, 'POST', `/v1/sessions/${id}/events`, userMessage('second'));
    await waitFor(() => conn.frames.filter((f) => f.event === 'session.status_idle').length === 2, 10_000, 'second turn on the stream');
    conn.close();
    const journal: RecordedEvent[] = await store.journal.readEvents(id);
    const upToLastFrame = journal.filter((e) => e.seq > 2 && e.seq <= Number(conn.frames[conn.frames.length - 1].id));
    expect(conn.frames.map((f) => JSON.parse(f.data))).toEqual(upToLastFrame.map(toPublicEvent));
  }, 30_000);

  it('recovers with the fallback answer when no sandbox-manager replies, and with a live one when it does', async () => {
    const agent = await call(url, key, 'POST', '/v1/agents', { name: 'a', model: 'm' });
    const env = await call(url, key, 'POST', '/v1/environments', { name: 'e' });
    const id = (await call(url, key, 'POST', '/v1/sessions', { agent: agent.json.id, environment_id: env.json.id })).json.id as string;
    await waitFor(async () => (await store.journal.readEvents(id)).some((e) => e.type === 'SandboxBound'), 10_000, 'sandbox bound');

    const recoveries = async () => (await store.journal.readEvents(id, { types: ['SessionRecovered'] })).map((e) => (e.type === 'SessionRecovered' ? e.data.outcome : null));
    const silent = await call(url, key, 'POST', `/v1/sessions/${id}/recover`);
    expect(silent.status).toBe(200);
    // Nobody answered the probe: the gateway told the kernel there is no sandbox.
    expect(await recoveries()).not.toContain('reattached');
    await waitFor(async () => (await store.sessions.getById(id))?.view.sandbox != null, 10_000, 'a new sandbox bound');

    const asked: unknown[] = [];
    const responder = nc.subscribe(Subjects.query('sandbox-manager', SandboxManagerQueries.sandbox), {
      callback: (_, msg) => {
        const request = msg.json<{ session_id: string; generation: number }>();
        asked.push(request);
        msg.respond(JSON.stringify({ ...request, sandbox: 'running' }));
      },
    });
    try {
      const probe = new NatsSandboxProbe(nc, systemClock, 1_000);
      const record = await store.sessions.getById(id);
      const generation = (record?.view.sandbox as { generation: number }).generation;
      expect(await probe.probe({ sessionId: id, sandbox: { generation, expires_at: null } })).toEqual({ exists: true, running: true, expiry_known: true, expired: false });
      expect(await probe.probe({ sessionId: id, sandbox: { generation, expires_at: '2000-01-01T00:00:00Z' } })).toMatchObject({ expired: true });
      expect(asked[0]).toEqual({ session_id: id, generation });
      const reattached = await call(url, key, 'POST', `/v1/sessions/${id}/recover`);
      expect(reattached.status).toBe(200);
      expect(reattached.json.berth).toMatchObject({ recover: { outcome: 'reattached', reason: null, already_requested: false } });
      expect((await recoveries()).pop()).toBe('reattached');
    } finally {
      responder.unsubscribe();
    }
  }, 30_000);

  describe('an outside subscriber with a credential minted over HTTP', () => {
    /** Reads from `subscriber` until `until` holds, handling (recording) one event at a time. */
    const readUntil = async (subscriber: BerthEventSubscriber, after: number, into: ReceivedEvent[], until: () => boolean) => {
      if (until()) return;
      for await (const received of subscriber.events({ after })) {
        into.push(received);
        if (until()) break;
      }
    };
    const turn = async (ownerKey: string, id: string, text: string) => {
      const before = (await store.journal.readEvents(id, { types: ['TurnCompleted'] })).length;
      await call(url, ownerKey, 'POST', `/v1/sessions/${id}/events`, userMessage(text));
      await waitFor(async () => (await store.journal.readEvents(id, { types: ['TurnCompleted'] })).length > before, 10_000, `turn "${text}"`);
    };

    it('receives exactly what GET /v1/sessions/{id}/events returns, in order, and after a restart resumes with no gap and no repeat', async () => {
      const ownerKey = await apiKeyOf('owner_sub');
      const agent = await call(url, ownerKey, 'POST', '/v1/agents', { name: 'a', model: 'm' });
      const env = await call(url, ownerKey, 'POST', '/v1/environments', { name: 'e' });
      const open = async () => (await call(url, ownerKey, 'POST', '/v1/sessions', { agent: agent.json.id, environment_id: env.json.id })).json.id as string;
      const [s1, s2] = [await open(), await open()];
      await turn(ownerKey, s1, 'one');
      // Another owner's session, busy at the same time: none of it may reach this subscriber.
      const otherKey = await apiKeyOf('owner_other');
      const other = (await call(url, otherKey, 'POST', '/v1/sessions', {
        agent: (await call(url, otherKey, 'POST', '/v1/agents', { name: 'a', model: 'm' })).json.id,
        environment_id: (await call(url, otherKey, 'POST', '/v1/environments', { name: 'e' })).json.id,
      })).json.id as string;
      await turn(otherKey, other, 'elsewhere');

      const minted = await call(url, ownerKey, 'POST', '/v1/nats_credentials', { name: 'billing' });
      expect(minted.status).toBe(200);
      const credential = minted.json as SubscriberCredential;
      const journalCount = async () => (await store.journal.readEvents(s1)).length + (await store.journal.readEvents(s2)).length;

      // First run: the history so far (the stream starts with the owner's past events), then stop half-way through a live turn.
      const received: ReceivedEvent[] = [];
      const first = await BerthEventSubscriber.connect(credential);
      const history = await journalCount();
      await readUntil(first, 0, received, () => received.length === history);
      await turn(ownerKey, s2, 'two');
      const stopAt = received.length + 2;
      await readUntil(first, received.length === 0 ? 0 : received[received.length - 1].position, received, () => received.length === stopAt);
      await first.close();
      const stored = received[received.length - 1].position;

      // While stopped, more happens; the restarted client resumes after the stored position.
      await turn(ownerKey, s1, 'three');
      const second = await BerthEventSubscriber.connect(credential);
      const total = await journalCount();
      await readUntil(second, stored, received, () => received.length === total);
      await second.close();

      const positions = received.map((r) => r.position);
      expect(positions).toEqual([...positions].sort((a, b) => a - b));
      expect(new Set(positions).size).toBe(positions.length);
      expect(new Set(received.map((r) => r.sessionId))).toEqual(new Set([s1, s2]));
      for (const id of [s1, s2]) {
        const mine = received.filter((r) => r.sessionId === id);
        const journal = await store.journal.readEvents(id);
        expect(mine.map((r) => r.seq)).toEqual(journal.map((e) => e.seq));
        expect(mine.map((r) => r.event)).toEqual(journal.map(toPublicEvent));
        const listed = await call(url, ownerKey, 'GET', `/v1/sessions/${id}/events?limit=100`);
        expect(mine.map((r) => r.event)).toEqual(listed.json.data);
      }
    }, 60_000);
  });

  it('reports readiness of NATS', async () => {
    expect((await call(url, null, 'GET', '/readyz')).json).toEqual({ status: 'ready', checks: { nats: 'ok' } });
  });
});
