import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseRecordedEvent, Subjects, toPublicEvent } from '@berth/contracts';
import { randomIds } from '@berth/core';
import { JetStreamPublisher, NatsCommandBus } from '@berth/nats';
import type { BerthStore } from '@berth/ports';
import { createStore } from '@berth/store';
import { freePort, startNatsServer, type NatsServerHandle } from '@berth/testing';
import { jetstream } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import { issueApiKey } from '../src/auth/api-key';
import { call, userMessage } from './support/api';
import { FakeTurnRunner } from './support/fake-turn-runner';
import { startKernelService, startServiceProcess, type ServiceProcess } from './support/service-process';
import { openSse } from './support/sse-client';
import { waitFor } from './support/wait-for';

/**
 * Two gateway processes on one store and one broker (docs/scale-out.md "Replicas"): an SSE client
 * reading a session's stream from gateway A, A killed with SIGKILL, the session going on through
 * gateway B, and the client reconnecting to B with the `Last-Event-ID` it last saw from A: it gets
 * exactly the events after that id, in order, none twice and none missing.
 */
describe('an SSE client resumes on another gateway replica', () => {
  let server: NatsServerHandle;
  let dir: string;
  let kernel: ServiceProcess;
  let gateways: ServiceProcess[] = [];
  let urls: string[] = [];
  let nc: NatsConnection;
  let bus: NatsCommandBus;
  let store: BerthStore;
  let runner: FakeTurnRunner;
  let key: string;

  beforeAll(async () => {
    server = await startNatsServer();
    dir = mkdtempSync(join(tmpdir(), 'berth-two-gateways-'));
    const storeUrl = `sqlite:${join(dir, 'berth.db')}`;
    kernel = await startKernelService({ ...server.env('session-kernel'), BERTH_STORE_URL: storeUrl });
    store = createStore(storeUrl);
    await store.init();
    const ports = [await freePort(), await freePort()];
    gateways = await Promise.all(
      ports.map((port) =>
        startServiceProcess('gateway', { ...server.env('gateway'), BERTH_NATS_ISSUER: server.issuerFile, BERTH_STORE_URL: storeUrl, PORT: String(port), HOST: '127.0.0.1' }, /ready: http/, 60_000),
      ),
    );
    urls = ports.map((port) => `http://127.0.0.1:${port}`);
    nc = await server.connect();
    bus = new NatsCommandBus(nc, new JetStreamPublisher(jetstream(nc)), { defaultTimeoutMs: 10_000 });
    runner = new FakeTurnRunner(bus, (listener) => {
      const sub = nc.subscribe(Subjects.allEvents, { callback: (err, msg) => void (err ? undefined : listener(parseRecordedEvent(msg.json()))) });
      return () => sub.unsubscribe();
    });
    const issued = issueApiKey({ ownerId: 'owner_replicas', name: 'test', id: randomIds.next('bk'), now: new Date() });
    await store.apiKeys.insert(issued.record);
    key = issued.key;
  }, 120_000);

  afterAll(async () => {
    runner?.close();
    bus?.close();
    await nc?.close();
    for (const g of gateways) await g.stop();
    await kernel?.stop();
    await store?.close();
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  it('gets from gateway B exactly the events after the Last-Event-ID it saw from gateway A, once A is dead', async () => {
    const [a, b] = urls as [string, string];
    const agent = await call(a, key, 'POST', '/v1/agents', { name: 'a', model: 'claude-sonnet-4-5', system: 'You echo.' });
    const env = await call(a, key, 'POST', '/v1/environments', { name: 'e' });
    const session = await call(a, key, 'POST', '/v1/sessions', { agent: agent.json.id, environment_id: env.json.id });
    const id = session.json.id as string;
    const idles = (frames: readonly { event: string | null }[]) => frames.filter((f) => f.event === 'session.status_idle').length;

    const onA = await openSse(`${a}/v1/sessions/${id}/events/stream`, { 'x-api-key': key });
    expect((await call(a, key, 'POST', `/v1/sessions/${id}/events`, userMessage('first'))).status).toBe(200);
    await waitFor(() => idles(onA.frames) === 1, 15_000, 'the first turn on gateway A\'s stream');
    const lastSeen = onA.frames.at(-1)?.id as string;

    await gateways[0]?.kill();
    // The connection dies with A ("other side closed").
    await onA.ended.catch(() => undefined);
    // The session goes on through B while the client is away.
    expect((await call(b, key, 'POST', `/v1/sessions/${id}/events`, userMessage('second'))).status).toBe(200);
    await waitFor(async () => (await store.journal.readEvents(id, { types: ['TurnCompleted'] })).length === 2, 15_000, 'the second turn');

    const onB = await openSse(`${b}/v1/sessions/${id}/events/stream`, { 'x-api-key': key, 'last-event-id': lastSeen });
    await waitFor(() => idles(onB.frames) === 1, 15_000, 'the second turn on gateway B\'s stream');
    onB.close();

    const journal = await store.journal.readEvents(id);
    const through = Number(onB.frames.at(-1)?.id);
    const expected = journal.filter((e) => e.seq > Number(lastSeen) && e.seq <= through).map(toPublicEvent);
    expect(onB.frames.map((f) => Number(f.id))).toEqual(journal.filter((e) => e.seq > Number(lastSeen) && e.seq <= through).map((e) => e.seq));
    expect(onB.frames.map((f) => JSON.parse(f.data))).toEqual(expected);
    // Together the two connections saw the session's stream from A's first frame on, each event once.
    const from = Number(onA.frames[0]?.id);
    expect([...onA.frames, ...onB.frames].map((f) => JSON.parse(f.data))).toEqual(journal.filter((e) => e.seq >= from && e.seq <= through).map(toPublicEvent));
  }, 90_000);
});
