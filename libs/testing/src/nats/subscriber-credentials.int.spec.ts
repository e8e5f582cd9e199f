import { Streams, Subjects, toEventMessage, type RecordedEvent } from '@berth/contracts';
import { applyTopology, berthTopology, connectNats, issueUser, JetStreamPublisher, readIssuerMaterial, SubscriberIssuer, type IssuedUser } from '@berth/nats';
import { BerthEventSubscriber, type ReceivedEvent, type SubscriberCredential } from '@berth/subscriber';
import { AckPolicy, DeliverPolicy, jetstream, jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import { startNatsServer, type NatsServerHandle } from './nats-server';
import { refused, refusedSubscription } from './permission-probes';
import { waitUntil } from './wait-until';

jest.setTimeout(60_000);

const eventOf = (sessionId: string, seq: number, text: string): RecordedEvent => ({
  id: `sevt_${sessionId}_${seq}`,
  type: 'UserMessageReceived',
  session_id: sessionId,
  seq,
  schema_version: 1,
  command_id: `cmd_${sessionId}_${seq}`,
  occurred_at: new Date(Date.UTC(2026, 0, 1, 0, 0, seq)).toISOString(),
  data: { turn_id: `turn_${seq}`, content: [{ type: 'text', text }], queued: false },
});

/**
 * Outside subscribers' credentials against a real nats-server, minted and revoked the way the
 * gateway does it: owner A reads A's events and nothing of B's, publishes nothing, and is refused
 * once revoked.
 */
describe('subscriber credentials: per-owner, read-only, revocable', () => {
  let server: NatsServerHandle;
  let kernel: NatsConnection;
  let issuer: SubscriberIssuer;
  const seqs = new Map<string, number>();

  /** Publishes the next event of a session the way the kernel's outbox does. */
  const publish = async (ownerId: string, sessionId: string, text: string) => {
    const seq = (seqs.get(sessionId) ?? 0) + 1;
    seqs.set(sessionId, seq);
    const event = eventOf(sessionId, seq, text);
    await new JetStreamPublisher(jetstream(kernel)).publish(Subjects.event(sessionId, ownerId, event.type), toEventMessage(event), { msgId: `${sessionId}:${seq}` });
  };
  const credentialOf = (issued: IssuedUser, ownerId: string): SubscriberCredential => ({
    creds: issued.creds,
    connection: { servers: server.url, inbox_prefix: Subjects.ownerInbox(ownerId), stream: Streams.ownerEvents(ownerId) },
  });
  const raw = (issued: IssuedUser, ownerId: string) => connectNats({ url: server.url, name: 'raw-subscriber', creds: issued.creds, inboxPrefix: Subjects.ownerInbox(ownerId) });

  beforeAll(async () => {
    server = await startNatsServer();
    const admin = await server.connect();
    await applyTopology(await jetstreamManager(admin), berthTopology());
    await admin.close();
    kernel = await server.connect('session-kernel');
    issuer = await SubscriberIssuer.connect(server.url, readIssuerMaterial(server.issuerFile));
  });

  afterAll(async () => {
    await issuer?.close();
    await kernel?.close();
    await server?.stop();
  });

  it("hands owner A A's events, history first, and none of B's", async () => {
    await publish('owner_a', 'sesn_a1', 'a1 before the credential');
    await publish('owner_b', 'sesn_b1', 'b1 secret');
    const a = await issuer.issue('owner_a', 'dashboard');
    await publish('owner_a', 'sesn_a2', 'a2 live');
    await publish('owner_b', 'sesn_b1', 'b1 secret again');
    await publish('owner_a', 'sesn_a1', 'a1 marker');

    const subscriber = await BerthEventSubscriber.connect(credentialOf(a, 'owner_a'));
    const received: ReceivedEvent[] = [];
    try {
      for await (const r of subscriber.events()) {
        received.push(r);
        if (r.sessionId === 'sesn_a1' && r.seq === 2) break;
      }
    } finally {
      await subscriber.close();
    }
    expect(received.map((r) => `${r.sessionId}:${r.seq}`)).toEqual(['sesn_a1:1', 'sesn_a2:1', 'sesn_a1:2']);
    expect(received[0].event).toMatchObject({ type: 'user.message', content: [{ type: 'text', text: 'a1 before the credential' }] });
  });

  it("refuses A everything else: commands, B's stream and subjects, the stream and message APIs", async () => {
    const a = await issuer.issue('owner_a', 'prober');
    await issuer.ensureOwnerStream('owner_b');
    const nc = await raw(a, 'owner_a');
    const js = jetstream(nc);
    try {
      expect(await refused(() => js.publish(Subjects.command('sesn_b1', 'SubmitUserMessage'), '{}'))).toBe(true);
      expect(await refused(() => js.publish(Subjects.event('sesn_b1', 'owner_b', 'TurnStarted'), '{}'))).toBe(true);
      expect(await refused(() => js.consumers.get(Streams.ownerEvents('owner_b')))).toBe(true);
      expect(await refused(async () => (await jetstreamManager(nc, { checkAPI: false })).streams.info(Streams.ownerEvents('owner_b')))).toBe(true);
      expect(await refused(async () => (await jetstreamManager(nc, { checkAPI: false })).streams.getMessage(Streams.ownerEvents('owner_a'), { seq: 1 }))).toBe(true);
      expect(await refused(() => nc.request(`$JS.API.DIRECT.GET.${Streams.ownerEvents('owner_b')}`, JSON.stringify({ seq: 1 })))).toBe(true);
      expect(await refused(() => nc.request(`$JS.API.STREAM.CREATE.MINE`, JSON.stringify({ name: 'MINE', subjects: ['x.>'] })))).toBe(true);
      expect(await refusedSubscription(nc, Subjects.ownerEvents('owner_b'))).toBe(true);
      expect(await refusedSubscription(nc, '>')).toBe(true);
      expect(await refusedSubscription(nc, `${Subjects.ownerInbox('owner_b')}.>`)).toBe(true);
      // Its own stream through its own durable consumer is allowed (the positive control).
      const jsm = await jetstreamManager(nc, { checkAPI: false });
      await jsm.consumers.add(Streams.ownerEvents('owner_a'), { durable_name: 'billing', ack_policy: AckPolicy.Explicit, deliver_policy: DeliverPolicy.All });
      const first = await (await js.consumers.get(Streams.ownerEvents('owner_a'), 'billing')).next({ expires: 5_000 });
      expect(first?.json<{ session_id: string }>().session_id).toBe('sesn_a1');
    } finally {
      await nc.close();
    }
  });

  it("cannot make the server deliver into Berth's subjects through a push consumer (accounts keep them apart)", async () => {
    const a = await issuer.issue('owner_a', 'pusher');
    const nc = await raw(a, 'owner_a');
    // Something in the subscribers' account listening on the deliver subject, so the push consumer does deliver.
    const material = readIssuerMaterial(server.issuerFile);
    const observerUser = await issueUser({
      name: 'observer',
      account: material.subscribers_account,
      signingSeed: material.subscribers_signing_seed,
      permissions: { publish: [], subscribe: ['>'], respond: false },
    });
    const observer = await connectNats({ url: server.url, name: 'observer', creds: observerUser.creds });
    const target = Subjects.command('sesn_b1', 'SubmitUserMessage');
    let delivered = 0;
    observer.subscribe(target, { callback: () => void (delivered += 1) });
    await observer.flush();
    const admin = await server.connect();
    try {
      // Allowed on its own stream; the deliver subject is resolved in the subscribers' account.
      await (await jetstreamManager(nc, { checkAPI: false })).consumers.add(Streams.ownerEvents('owner_a'), {
        durable_name: 'sneaky',
        ack_policy: AckPolicy.None,
        deliver_policy: DeliverPolicy.All,
        deliver_subject: target,
      });
      await waitUntil(() => delivered > 0, { what: 'the push consumer delivering' });
      expect((await (await jetstreamManager(admin)).streams.info(Streams.commands)).state.messages).toBe(0);
    } finally {
      await admin.close();
      await observer.close();
      await nc.close();
    }
  });

  it('refuses a revoked credential on its next connect and disconnects it now; other credentials keep working', async () => {
    const revoked = await issuer.issue('owner_a', 'revoked');
    const kept = await issuer.issue('owner_a', 'kept');
    const subscriber = await BerthEventSubscriber.connect(credentialOf(revoked, 'owner_a'));
    const closed = subscriber.closed();

    await issuer.publishRevocations({ [revoked.publicKey]: Math.ceil(Date.now() / 1000) });

    expect(await closed).toBeInstanceOf(Error);
    await expect(BerthEventSubscriber.connect(credentialOf(revoked, 'owner_a'))).rejects.toThrow(/Authorization Violation|revoked/i);
    const still = await BerthEventSubscriber.connect(credentialOf(kept, 'owner_a'));
    try {
      const first = await still.events()[Symbol.asyncIterator]().next();
      expect(first.value?.sessionId).toBe('sesn_a1');
    } finally {
      await still.close();
    }
  });
});
