import { COMMAND_TYPES, Consumers, Streams, Subjects } from '@berth/contracts';
import { applyTopology, berthTopology, connectNats, generateAuthKeys, issueServiceCreds, JsApi, SERVICE_NAMES, SERVICE_USERS, type ServiceName } from '@berth/nats';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import { startNatsServer, type NatsServerHandle } from './nats-server';
import { isPermissionViolation, refused, refusedSubscription } from './permission-probes';

jest.setTimeout(60_000);

/** Publishes through JetStream: true once stored, false when the server refused this user the subject. */
const mayPublish = async (nc: NatsConnection, subject: string) => !(await refused(() => jetstream(nc).publish(subject, '{}', { timeout: 5_000 })));

/** A request on a subject: false when refused as a permission violation, true when it went out (answered or not). */
const mayRequest = async (nc: NatsConnection, subject: string) => !(await refused(() => nc.request(subject, '{}', { timeout: 1_000 }).catch((e: unknown) => {
  if (isPermissionViolation(e)) throw e;
})));

const maySubscribe = async (nc: NatsConnection, subject: string) => !(await refusedSubscription(nc, subject));

describe('NATS credentials: one user per service with least-privilege permissions', () => {
  let server: NatsServerHandle;
  const users = new Map<ServiceName, NatsConnection>();

  beforeAll(async () => {
    server = await startNatsServer();
    const admin = await server.connect();
    await applyTopology(await jetstreamManager(admin), berthTopology());
    await admin.close();
    for (const service of SERVICE_NAMES) users.set(service, await server.connect(service));
  });

  afterAll(async () => {
    for (const nc of users.values()) await nc.close();
    await server?.stop();
  });

  it('refuses a client without credentials, and one with credentials it did not sign', async () => {
    await expect(connectNats({ url: server.url, name: 'anonymous' })).rejects.toThrow(/requires credentials/);
    const foreign = await issueServiceCreds(generateAuthKeys(), 'gateway');
    await expect(connectNats({ url: server.url, name: 'gateway', creds: foreign })).rejects.toThrow(/refused the credentials/);
  });

  it('lets each service publish exactly the commands it owns', async () => {
    for (const service of SERVICE_NAMES) {
      const owned = new Set<string>(SERVICE_USERS[service].commands);
      const nc = users.get(service) as NatsConnection;
      const allowed: string[] = [];
      for (const type of COMMAND_TYPES) if (await mayPublish(nc, Subjects.command('sesn_auth', type))) allowed.push(type);
      expect({ service, allowed: allowed.sort() }).toEqual({ service, allowed: [...owned].sort() });
    }
  });

  it('lets only the kernel publish events, and only the gateway tail them over core NATS', async () => {
    for (const service of SERVICE_NAMES) {
      const nc = users.get(service) as NatsConnection;
      expect({ service, publishes: await mayPublish(nc, Subjects.event('sesn_auth', 'owner_auth', 'TurnStarted')) }).toEqual({ service, publishes: service === 'session-kernel' });
      expect({ service, tails: await maySubscribe(nc, Subjects.sessionEvents('sesn_auth')) }).toEqual({ service, tails: service === 'gateway' });
    }
  });

  it("keeps every user out of the others' inboxes, consumers and query subjects", async () => {
    const manager = users.get('sandbox-manager') as NatsConnection;
    const reconciler = users.get('turn-reconciler') as NatsConnection;
    const gateway = users.get('gateway') as NatsConnection;
    expect(await maySubscribe(manager, `${Subjects.serviceInbox('gateway')}.>`)).toBe(false);
    expect(await maySubscribe(gateway, `${Subjects.serviceInbox('session-kernel')}.>`)).toBe(false);
    expect(await maySubscribe(manager, `${Subjects.serviceInbox('sandbox-manager')}.x`)).toBe(true);
    // Pulling from another service's durable consumer would steal its deliveries.
    expect(await mayRequest(manager, JsApi.next(Streams.events, Consumers.turnReconciler))).toBe(false);
    expect(await mayRequest(gateway, JsApi.next(Streams.commands, Consumers.kernel))).toBe(false);
    expect(await mayRequest(reconciler, JsApi.next(Streams.events, Consumers.turnReconciler))).toBe(true);
    // Only the sandbox-manager answers its queries; the reconciler and the gateway may ask them.
    expect(await maySubscribe(reconciler, Subjects.query('sandbox-manager', 'probe'))).toBe(false);
    expect(await maySubscribe(manager, Subjects.query('sandbox-manager', 'probe'))).toBe(true);
    expect(await mayRequest(users.get('session-kernel') as NatsConnection, Subjects.query('sandbox-manager', 'probe'))).toBe(false);
    expect(await mayRequest(reconciler, Subjects.query('sandbox-manager', 'probe'))).toBe(true);
    // Streams are the kernel's: a reactor may not change them.
    expect(await mayRequest(manager, JsApi.streamUpdate(Streams.commands))).toBe(false);
  });
});
