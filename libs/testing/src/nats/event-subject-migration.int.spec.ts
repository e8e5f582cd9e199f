import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Consumers, parseRecordedEvent, parseSessionSubject, Streams, Subjects, toEventMessage, type RecordedEvent } from '@berth/contracts';
import { applyTopology, berthTopology, JetStreamPublisher, readIssuerMaterial, serviceTopology, SubscriberIssuer, type ServiceName } from '@berth/nats';
import { BerthEventSubscriber, type ReceivedEvent } from '@berth/subscriber';
import { jetstream, jetstreamManager, type ConsumerConfig, type JsMsg, type StreamConfig } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import { freePort, natsServerBinary, startNatsServer, type NatsServerHandle } from './nats-server';

jest.setTimeout(90_000);

/** deploy/nats as the release before the owner token declared it. */
const V1 = join(__dirname, 'fixtures', 'topology-v1');

const eventOf = (sessionId: string, seq: number, type: 'TurnStarted' | 'TurnCompleted' | 'UserMessageReceived'): RecordedEvent =>
  ({
    id: `sevt_${sessionId}_${seq}`,
    type,
    session_id: sessionId,
    seq,
    schema_version: 1,
    command_id: `cmd_${sessionId}_${seq}`,
    occurred_at: new Date(Date.UTC(2026, 0, 1, 0, 0, seq)).toISOString(),
    data: type === 'UserMessageReceived' ? { turn_id: 'turn_1', content: [{ type: 'text', text: 'hi' }], queued: false } : type === 'TurnCompleted' ? { turn_id: 'turn_1', interrupted: false } : { turn_id: 'turn_1' },
  }) as RecordedEvent;

async function fetchAll(nc: NatsConnection, consumer: string, max: number): Promise<JsMsg[]> {
  const c = await jetstream(nc).consumers.get(Streams.events, consumer);
  const got: JsMsg[] = [];
  while (got.length < max) {
    const m = await c.next({ expires: 2_000 });
    if (!m) break;
    got.push(m);
  }
  return got;
}

/** The previous release's broker: no auth, everything in the global account. */
async function previousRelease(jetstreamDir: string, run: (nc: NatsConnection) => Promise<void>): Promise<void> {
  const port = await freePort();
  const proc = spawn(natsServerBinary(), ['-js', '-a', '127.0.0.1', '-p', String(port), '-sd', jetstreamDir], { stdio: 'ignore' });
  const exited = new Promise((r) => proc.once('exit', r));
  try {
    const nc = await connect({ servers: `nats://127.0.0.1:${port}`, waitOnFirstConnect: true });
    try {
      await run(nc);
    } finally {
      await nc.close();
    }
  } finally {
    proc.kill('SIGTERM');
    await exited;
  }
}

describe('upgrading a platform to per-service NATS users and owner tokens in event subjects', () => {
  let jetstreamDir: string;
  let server: NatsServerHandle;
  let admin: NatsConnection;

  beforeAll(() => {
    jetstreamDir = mkdtempSync(join(tmpdir(), 'berth-nats-v1-'));
  });

  afterAll(async () => {
    await admin?.close();
    await server?.stop();
    rmSync(jetstreamDir, { recursive: true, force: true });
  });

  it("keeps every existing event, reactors go on where they stopped, and new events reach the owner's subscribers", async () => {
    // 1. The previous release: no auth, its topology, its event subjects (no owner), a reconciler that handled two.
    const old = [eventOf('sesn_old1', 1, 'UserMessageReceived'), eventOf('sesn_old1', 2, 'TurnStarted'), eventOf('sesn_old1', 3, 'TurnCompleted'), eventOf('sesn_old2', 1, 'UserMessageReceived'), eventOf('sesn_old2', 2, 'TurnStarted')];
    await previousRelease(jetstreamDir, async (nc) => {
      const jsm = await jetstreamManager(nc);
      const files = readdirSync(V1);
      for (const f of files.filter((f) => f.startsWith('stream.'))) await jsm.streams.add(JSON.parse(readFileSync(join(V1, f), 'utf8')) as StreamConfig);
      for (const f of files.filter((f) => f.startsWith('consumer.'))) {
        await jsm.consumers.add(f.split('.')[1], JSON.parse(readFileSync(join(V1, f), 'utf8')) as ConsumerConfig);
      }
      const publisher = new JetStreamPublisher(jetstream(nc));
      for (const e of old) await publisher.publish(`session.${e.session_id}.evt.${e.type}`, e, { msgId: `${e.session_id}:${e.seq}` });
      for (const m of await fetchAll(nc, Consumers.turnReconciler, 2)) m.ack();
      await nc.flush();
    });

    // 2. The new release on the same store: operator auth (the anonymous streams are adopted), and
    //    each service applies its part of the topology with its own user.
    server = await startNatsServer({ jetstreamDir });
    admin = await server.connect();
    const jsm = await jetstreamManager(admin);
    const users = new Map<ServiceName, NatsConnection>();
    for (const service of ['session-kernel', 'sandbox-manager', 'turn-reconciler'] as const) {
      const nc = await server.connect(service);
      users.set(service, nc);
      await applyTopology(await jetstreamManager(nc), serviceTopology(berthTopology(), service));
    }
    const kernel = users.get('session-kernel') as NatsConnection;
    const created = [
      { owner: 'owner_a', event: eventOf('sesn_old1', 4, 'UserMessageReceived') },
      { owner: 'owner_a', event: eventOf('sesn_new1', 1, 'UserMessageReceived') },
      { owner: 'owner_b', event: eventOf('sesn_b', 1, 'UserMessageReceived') },
      { owner: 'owner_a', event: eventOf('sesn_new1', 2, 'TurnStarted') },
    ];
    const kernelPublisher = new JetStreamPublisher(jetstream(kernel));
    for (const { owner, event } of created) {
      await kernelPublisher.publish(Subjects.event(event.session_id, owner, event.type), toEventMessage(event), { msgId: `${event.session_id}:${event.seq}` });
    }

    try {
      // Every event of the old release is still in SESSION_EVT, under its old subject, before the new ones.
      const info = await jsm.streams.info(Streams.events);
      expect(info.config.subjects).toEqual([Subjects.allEvents]);
      expect(info.state.messages).toBe(old.length + created.length);
      for (const [i, e] of old.entries()) {
        const stored = await jsm.streams.getMessage(Streams.events, { seq: i + 1 });
        expect(stored?.subject).toBe(`session.${e.session_id}.evt.${e.type}`);
        expect(parseRecordedEvent(stored?.json())).toEqual(e);
      }

      // The reconciler's durable consumer resumes after the two it acked: the rest of the old ones, then the new.
      const key = (m: JsMsg) => {
        const subject = parseSessionSubject(m.subject);
        const e = parseRecordedEvent(m.json());
        expect(subject?.sessionId).toBe(e.session_id);
        expect(subject?.type).toBe(e.type);
        return `${e.session_id}:${e.seq}`;
      };
      const reconciled = await fetchAll(users.get('turn-reconciler') as NatsConnection, Consumers.turnReconciler, 100);
      expect(reconciled.map(key)).toEqual([...old.slice(2), ...created.map((c) => c.event)].map((e) => `${e.session_id}:${e.seq}`));
      const managed = await fetchAll(users.get('sandbox-manager') as NatsConnection, Consumers.sandboxManagerControl, 100);
      expect(managed.map(key)).toEqual([...old, ...created.map((c) => c.event)].map((e) => `${e.session_id}:${e.seq}`));

      // New events land where owners' subscribers read them; old ones stay readable through the API and the journal.
      const issuer = await SubscriberIssuer.connect(server.url, readIssuerMaterial(server.issuerFile));
      try {
        const issued = await issuer.issue('owner_a', 'after-upgrade');
        const subscriber = await BerthEventSubscriber.connect({
          creds: issued.creds,
          connection: { servers: server.url, inbox_prefix: Subjects.ownerInbox('owner_a'), stream: Streams.ownerEvents('owner_a') },
        });
        const received: ReceivedEvent[] = [];
        try {
          for await (const r of subscriber.events()) if (received.push(r) === 3) break;
        } finally {
          await subscriber.close();
        }
        expect(received.map((r) => `${r.sessionId}:${r.seq}`)).toEqual(['sesn_old1:4', 'sesn_new1:1', 'sesn_new1:2']);
        expect(received[0].event.type).toBe('user.message');
      } finally {
        await issuer.close();
      }
    } finally {
      for (const nc of users.values()) await nc.close();
    }
  });
});
