import 'reflect-metadata';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { Consumers, Streams } from '@berth/contracts';
import { systemClock } from '@berth/core';
import { JetStreamPublisher, NatsCommandBus, applyTopology, berthTopology, connectNats, readIssuerMaterial, serviceTopology, SubscriberIssuer } from '@berth/nats';
import { JetStreamTransport, createJetStreamMicroservice, loadConfig, onShutdownSignals } from '@berth/nest';
import { secretBoxFromEnv } from '@berth/secrets';
import { createStore } from '@berth/store';
import { consumerMetrics, failedToStart, startServiceTelemetry, vaultMetrics, webhookMetrics } from '@berth/telemetry';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { createGatewayApp } from './app/create-gateway-app';
import { consoleBuildExists } from './console/serve-console';
import { GatewayConfigSchema } from './config/gateway.config';
import { NatsSandboxProbe } from './sessions/nats-sandbox-probe';
import { NatsEventFeed } from './stream/nats-event-feed';
import { revocationsOf } from './nats-credentials/nats-credentials.service';
import { WebhookDispatcher } from './webhooks/delivery/webhook-dispatcher';
import { WebhookEventsModule } from './webhooks/delivery/webhook-events.controller';
import { WebhookPlanner } from './webhooks/delivery/webhook-planner';
import { HttpWebhookSender } from './webhooks/delivery/webhook-sender';
import { NatsWorkspaceReads } from './workspace/nats-workspace-reads';
import { CredentialRefresher } from './vaults/refresh/credential-refresher';
import { HttpTokenEndpoint } from './vaults/refresh/http-token-endpoint';
import { ResourceWebhooks } from './webhooks/delivery/resource-webhooks';

/** The most of a token endpoint's answer the refresher reads. */
const TOKEN_ANSWER_MAX_BYTES = 64 * 1024;

/** Composition root: the store, NATS (commands out, live events in, sandbox probes), HTTP, the webhook delivery worker and the vault credential refresher. */
async function main(): Promise<void> {
  // The gateway serves /metrics on its own HTTP port.
  const telemetry = await startServiceTelemetry('gateway', { metricsPort: false });
  const { log } = telemetry;
  const config = loadConfig(GatewayConfigSchema);
  ensureSqliteDir(config.storeUrl);
  const store = createStore(config.storeUrl, { blobDir: config.blobDir });
  await store.init();
  const secrets = secretBoxFromEnv();

  const nc = await connectNats({ url: config.natsUrl, name: 'gateway', credsFile: config.natsCreds });
  // Its own part of the topology (the webhooks consumer; the kernel declares the streams, waited for).
  await applyTopology(await jetstreamManager(nc), serviceTopology(berthTopology({ tuning: { ackWaitMs: config.ackWaitMs, maxDeliver: config.maxDeliver } }), 'gateway'));
  const commandBus = new NatsCommandBus(nc, new JetStreamPublisher(jetstream(nc)), { defaultTimeoutMs: config.commandTimeoutMs });
  const issuer = config.natsIssuer ? await SubscriberIssuer.connect(config.natsUrl, readIssuerMaterial(config.natsIssuer), config.natsPublicUrl, config.streamReplicas) : null;
  // The store is the revocation list's source of truth: the server gets it at start and again
  // periodically, so a push another gateway raced with (or a resolver that lost it) converges.
  const pushRevocations = async () => issuer?.publishRevocations(revocationsOf(await store.natsCredentials.revoked()));
  await pushRevocations();
  const revocationSync = issuer
    ? setInterval(() => void pushRevocations().catch((e: unknown) => log.warn(`pushing NATS revocations failed (will retry): ${String(e)}`)), config.revocationSyncMs)
    : null;
  revocationSync?.unref();

  const app = await createGatewayApp({
    store,
    commandBus,
    eventFeed: new NatsEventFeed(nc),
    sandboxProbe: new NatsSandboxProbe(nc, systemClock, config.probeTimeoutMs),
    workspace: new NatsWorkspaceReads(nc, config.workspaceTimeoutMs),
    subscriberIssuer: issuer,
    readiness: [
      { name: 'store', check: async () => void (await store.sessions.getById('sesn_readiness_probe')) },
      { name: 'nats', check: async () => void (await nc.flush()) },
    ],
    options: {
      commandTimeoutMs: config.commandTimeoutMs,
      heartbeatMs: config.heartbeatMs,
      bodyLimit: config.bodyLimit,
      fileMaxBytes: config.fileMaxBytes,
      allowHostNetwork: config.allowHostNetwork,
    },
    log,
    pino: telemetry.pino,
    registry: telemetry.registry,
    consoleDir: config.consoleDir,
    secrets,
    webhookTargets: config.webhooks.targets,
    vaultRefresh: config.vaultRefresh.policy,
  });

  // Webhooks: session events into the outbox (a durable consumer), and the outbox out to endpoints.
  const hookMetrics = webhookMetrics(telemetry.registry);
  const planner = new WebhookPlanner({ endpoints: store.webhookEndpoints, deliveries: store.webhookDeliveries, sessions: store.sessions, journal: store.journal, now: () => systemClock.now().toISOString(), metrics: hookMetrics });
  const consumers = consumerMetrics(telemetry.registry);
  const webhookTransport = new JetStreamTransport({
    connection: nc,
    stream: Streams.events,
    consumer: Consumers.webhooks,
    maxDeliver: config.maxDeliver,
    log,
    observer: consumers.observer(Streams.events, Consumers.webhooks),
  });
  consumers.watch(Streams.events, Consumers.webhooks, () => webhookTransport.pending());
  const webhookEvents = await createJetStreamMicroservice(WebhookEventsModule.forRoot(planner), webhookTransport, log);
  const dispatcher = new WebhookDispatcher({
    endpoints: store.webhookEndpoints,
    deliveries: store.webhookDeliveries,
    secrets,
    sender: new HttpWebhookSender({ policy: config.webhooks.targets, timeoutMs: config.webhooks.timeoutMs }),
    clock: systemClock,
    log: log.child({ component: 'webhooks' }),
    metrics: hookMetrics,
    options: { policy: config.webhooks.policy, leaseMs: config.webhooks.leaseMs, batchSize: config.webhooks.batchSize, retentionMs: config.webhooks.retentionMs },
  });
  // OAuth refreshes of mcp_oauth credentials: every gateway runs one, the holder of the store lease acts.
  const refresher = new CredentialRefresher({
    vaults: store.vaults,
    leases: store.leases,
    secrets,
    endpoint: new HttpTokenEndpoint({ policy: config.webhooks.targets, timeoutMs: config.vaultRefresh.timeoutMs, maxBytes: TOKEN_ANSWER_MAX_BYTES }),
    webhooks: new ResourceWebhooks({ endpoints: store.webhookEndpoints, now: () => systemClock.now().toISOString() }),
    clock: systemClock,
    log: log.child({ component: 'vault-refresh' }),
    metrics: vaultMetrics(telemetry.registry),
    options: { policy: config.vaultRefresh.policy, leaseMs: config.vaultRefresh.leaseMs, batchSize: config.vaultRefresh.batchSize },
  });
  onShutdownSignals([
    { name: 'stop serving HTTP', run: () => app.close() },
    { name: 'stop planning webhook deliveries', run: () => webhookEvents.close() },
    { name: 'stop delivering webhooks and wait for attempts in flight', run: () => dispatcher.stop() },
    { name: 'stop refreshing vault credentials and give the lease up', run: () => refresher.stop() },
    { name: 'stop waiting for command outcomes', run: async () => commandBus.close() },
    { name: 'close the subscriber issuer', run: async () => {
      if (revocationSync) clearInterval(revocationSync);
      await issuer?.close();
    } },
    { name: 'drain the NATS connection', run: () => nc.drain() },
    { name: 'close the store', run: () => store.close() },
    { name: 'flush traces', run: () => telemetry.shutdown() },
  ], log);
  await app.listen(config.port, config.host);
  await webhookEvents.listen();
  dispatcher.start(config.webhooks.tickMs);
  refresher.start(config.vaultRefresh.tickMs);
  const address = app.getHttpServer().address() as { port: number };
  log.info(`ready: http://${config.host}:${address.port}`, {
    store: config.storeUrl,
    nats: config.natsUrl,
    subscriber_credentials: issuer !== null,
    console: consoleBuildExists(config.consoleDir),
    tracing: telemetry.tracing.exporting,
  });
}

/** The embedded default (`sqlite:./.berth/berth.db`) lives in a directory that may not exist yet. */
function ensureSqliteDir(storeUrl: string): void {
  const path = storeUrl.startsWith('sqlite:') ? storeUrl.slice('sqlite:'.length).replace(/^\/\//, '') : '';
  if (path && path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
}

main().catch(failedToStart('gateway'));
