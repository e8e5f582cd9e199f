// The gateway must not import application code, but its tests need the real kernel behind the bus.
/* eslint-disable @nx/enforce-module-boundaries */
import { createServer, type Server } from 'node:http';
import { randomBytes } from 'node:crypto';
import { silentLogger } from '@berth/testing';
import { vaultMetrics, webhookMetrics } from '@berth/telemetry';
import { Registry } from 'prom-client';
import { AesGcmSecretBox, UnconfiguredSecretBox, parseSecretKeys } from '@berth/secrets';
import { defaultRefreshPolicy, type RefreshPolicy } from '@berth/vaults-domain';
import type { DeliveryPolicy } from '@berth/webhooks-domain';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { randomIds, systemClock } from '@berth/core';
import type { BerthStore, Logger, SecretBox } from '@berth/ports';
import { createSessionKernel } from '@berth/session-kernel';
import { createStore } from '@berth/store';
import { createGatewayApp } from '../../src/app/create-gateway-app';
import type { GatewayOptions } from '../../src/app/gateway-deps';
import { issueApiKey } from '../../src/auth/api-key';
import { NO_SANDBOX } from '@berth/session-use-cases';
import type { WorkspaceReads } from '../../src/workspace/workspace-reads.port';
import { FakeSubscriberIssuer } from './fake-subscriber-issuer';
import { FakeTurnRunner } from './fake-turn-runner';
import { InMemoryEventFeed } from './in-memory-event-feed';
import { InProcessCommandBus } from './in-process-command-bus';
import { WebhookDispatcher } from '../../src/webhooks/delivery/webhook-dispatcher';
import { WebhookPlanner } from '../../src/webhooks/delivery/webhook-planner';
import { HttpWebhookSender } from '../../src/webhooks/delivery/webhook-sender';
import { ResourceWebhooks } from '../../src/webhooks/delivery/resource-webhooks';
import { CredentialRefresher } from '../../src/vaults/refresh/credential-refresher';
import { HttpTokenEndpoint } from '../../src/vaults/refresh/http-token-endpoint';

/** Retries in milliseconds, so a test sees a delivery through its whole life. */
const TEST_DELIVERY_POLICY: DeliveryPolicy = { retryDelaysMs: [50, 100], jitter: 0, maxAgeMs: 10 * 60 * 1000, disableAfterMs: 10 * 60 * 1000, attemptsKept: 20 };

export type GatewayHarness = Readonly<{
  url: string;
  app: NestExpressApplication;
  store: BerthStore;
  bus: InProcessCommandBus;
  feed: InMemoryEventFeed;
  issuer: FakeSubscriberIssuer;
  /** API keys of two owners. */
  keyA: string;
  keyB: string;
  /** The webhook delivery worker, composed as main.ts composes it (planner on the event feed, dispatcher ticking). */
  dispatcher: WebhookDispatcher;
  /** The vault credential refresher, composed as main.ts composes it (ticking unless `refresher.start` is false). */
  refresher: CredentialRefresher;
  /** The box that seals secrets at rest (tests open what the API stored). */
  secrets: SecretBox;
  /** A loopback receiver that answers 204 to every webhook. */
  sinkUrl: string;
  close(): Promise<void>;
}>;

export type GatewayHarnessOptions = {
  turnRunner?: boolean;
  /** The fake turn runner records a checkpoint with each completed turn (what a fork needs). */
  checkpoints?: boolean;
  /** Off: the gateway has no BERTH_NATS_ISSUER (subscriber credentials are not offered). */
  subscriberIssuer?: boolean;
  gateway?: Partial<GatewayOptions>;
  /** The operator setting BERTH_WEBHOOK_ALLOW_PRIVATE_TARGETS: on by default here, for loopback receivers. */
  allowPrivateWebhookTargets?: boolean;
  /** Reads of sessions' workspaces; without one, no session has a workspace to read. */
  workspace?: (store: BerthStore) => WorkspaceReads;
  /** false: no BERTH_SECRET_KEYS, as on a server that never set one; a string: that key ring (replicas share one). */
  secretKeys?: boolean | string;
  /** The store (default: SQLite in memory). */
  storeUrl?: string;
  /** Changes to the delivery worker's test policy (retries after 50 and 100 ms, 10 minutes to live). */
  deliveryPolicy?: Partial<DeliveryPolicy>;
  /** The refresher: its policy (default: Berth's), and whether it ticks by itself (every 20 ms) or only when a test calls `tick()`. */
  refresher?: { policy?: Partial<RefreshPolicy>; start?: boolean };
  /** Where the gateway, its delivery worker and its refresher log (nowhere by default). */
  log?: Logger;
};

/**
 * A running gateway on a free loopback port: SQLite in memory (or `storeUrl`), the real session kernel in-process, the live feed
 * in memory and (unless disabled) a fake turn runner answering turns.
 */
export async function startGateway(options: GatewayHarnessOptions = {}): Promise<GatewayHarness> {
  const store = createStore(options.storeUrl ?? 'sqlite::memory:');
  await store.init();
  const feed = new InMemoryEventFeed();
  const kernel = createSessionKernel({ journal: store.journal, snapshots: store.snapshots, clock: systemClock });
  const bus = new InProcessCommandBus(kernel, store.journal, feed);
  const runner = options.turnRunner === false ? null : new FakeTurnRunner(bus, (listener) => feed.onEvent(listener), options.checkpoints ? store.transcripts : null);
  const issuer = new FakeSubscriberIssuer();
  const secrets: SecretBox =
    options.secretKeys === false
      ? new UnconfiguredSecretBox()
      : new AesGcmSecretBox(parseSecretKeys(typeof options.secretKeys === 'string' ? options.secretKeys : `test:${randomBytes(32).toString('base64')}`));
  const targets = { allowPrivateTargets: options.allowPrivateWebhookTargets ?? true };
  const metrics = webhookMetrics(new Registry());
  const planner = new WebhookPlanner({ endpoints: store.webhookEndpoints, deliveries: store.webhookDeliveries, sessions: store.sessions, journal: store.journal, now: () => systemClock.now().toISOString(), metrics });
  const planning = new Set<Promise<unknown>>();
  const unplan = feed.onEvent((event) => {
    const p = planner.onEvent(event).finally(() => planning.delete(p));
    planning.add(p);
  });
  const dispatcher = new WebhookDispatcher({
    endpoints: store.webhookEndpoints,
    deliveries: store.webhookDeliveries,
    secrets,
    // Receivers in tests are IP literals on loopback; a name (hooks.example.com in route samples) is never looked up.
    sender: new HttpWebhookSender({ policy: targets, timeoutMs: 2_000, resolve: async (host) => Promise.reject(new Error(`tests resolve no names (${host})`)) }),
    clock: systemClock,
    log: options.log ?? silentLogger,
    metrics,
    options: { policy: { ...TEST_DELIVERY_POLICY, ...options.deliveryPolicy }, leaseMs: 5_000, batchSize: 8, retentionMs: 24 * 60 * 60 * 1000 },
  });
  const refreshPolicy: RefreshPolicy = { ...defaultRefreshPolicy, ...options.refresher?.policy };
  const refresher = new CredentialRefresher({
    vaults: store.vaults,
    leases: store.leases,
    secrets,
    // Token endpoints in tests are IP literals on loopback, like webhook receivers.
    endpoint: new HttpTokenEndpoint({ policy: targets, timeoutMs: 2_000, maxBytes: 64 * 1024, resolve: async (host) => Promise.reject(new Error(`tests resolve no names (${host})`)) }),
    webhooks: new ResourceWebhooks({ endpoints: store.webhookEndpoints, now: () => systemClock.now().toISOString() }),
    clock: systemClock,
    log: options.log ?? silentLogger,
    metrics: vaultMetrics(new Registry()),
    options: { policy: refreshPolicy, leaseMs: 5_000, batchSize: 8 },
  });
  const sink: Server = createServer((req, res) => req.resume().on('end', () => res.writeHead(204).end()));
  await new Promise<void>((resolve) => sink.listen(0, '127.0.0.1', resolve));
  const app = await createGatewayApp({
    store,
    commandBus: bus,
    eventFeed: feed,
    sandboxProbe: { probe: async () => NO_SANDBOX },
    workspace: options.workspace?.(store),
    subscriberIssuer: options.subscriberIssuer === false ? null : issuer,
    readiness: [{ name: 'store', check: async () => void (await store.sessions.getById('sesn_readiness')) }],
    options: options.gateway,
    log: options.log ?? silentLogger,
    secrets,
    webhookTargets: targets,
    vaultRefresh: refreshPolicy,
  });
  await app.listen(0, '127.0.0.1');
  dispatcher.start(20);
  if (options.refresher?.start !== false) refresher.start(20);
  const address = app.getHttpServer().address() as { port: number };
  const key = async (owner: string) => {
    const issued = issueApiKey({ ownerId: owner, name: 'test', id: randomIds.next('bk'), now: new Date() });
    await store.apiKeys.insert(issued.record);
    return issued.key;
  };
  return {
    url: `http://127.0.0.1:${address.port}`,
    app,
    store,
    bus,
    feed,
    issuer,
    keyA: await key('owner_a'),
    keyB: await key('owner_b'),
    dispatcher,
    refresher,
    secrets,
    sinkUrl: `http://127.0.0.1:${(sink.address() as { port: number }).port}/hook`,
    async close() {
      runner?.close();
      unplan();
      await Promise.all(planning);
      await dispatcher.stop();
      await refresher.stop();
      await new Promise((resolve) => sink.close(resolve));
      await app.close();
      await store.close();
    },
  };
}
