import 'reflect-metadata';
import { mkdirSync } from 'node:fs';
import { hostname } from 'node:os';
import { dirname } from 'node:path';
import { Consumers, Streams } from '@berth/contracts';
import { systemClock } from '@berth/core';
import { applyTopology, berthTopology, serviceTopology, connectNats, JetStreamPublisher, NatsCommandBus } from '@berth/nats';
import { createJetStreamMicroservice, JetStreamTransport, loadConfig, onShutdownSignals } from '@berth/nest';
import { createStore } from '@berth/store';
import { consumerMetrics, failedToStart, reconcilerMetrics, startServiceTelemetry } from '@berth/telemetry';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { JetStreamOpenTurnDirectory } from './adapters/jetstream-open-turn-directory';
import { NatsSandboxManagerClient } from './adapters/nats-sandbox-manager.client';
import { ReconcilerConfigSchema } from './config/reconciler.config';
import { ReconcilerModule } from './reconciler.module';
import { ReconcilerLease } from './reconciling/reconciler-lease';
import { TurnReconcilerService } from './reconciling/turn-reconciler.service';

/** Composition root: store and NATS adapters in; SESSION_EVT consumer and a sweep timer out. */
async function main(): Promise<void> {
  const telemetry = await startServiceTelemetry('turn-reconciler');
  const { log } = telemetry;
  const config = loadConfig(ReconcilerConfigSchema);
  ensureSqliteDir(config.storeUrl);
  const store = createStore(config.storeUrl);
  await store.init();

  const nc = await connectNats({ url: config.natsUrl, name: 'turn-reconciler', credsFile: config.natsCreds });
  await applyTopology(await jetstreamManager(nc), serviceTopology(berthTopology({ tuning: { ackWaitMs: config.ackWaitMs, maxDeliver: config.maxDeliver } }), 'turn-reconciler'));
  const commands = new NatsCommandBus(nc, new JetStreamPublisher(jetstream(nc)));

  const lease = new ReconcilerLease({ leases: store.leases, holder: `turn-reconciler:${config.instanceId ?? `${hostname()}:${process.pid}`}`, clock: systemClock, ttlMs: config.leaseTtlMs });
  const reconciler = new TurnReconcilerService({
    journal: store.journal,
    transcripts: store.transcripts,
    commands,
    sandboxManager: new NatsSandboxManagerClient(nc, { probeTimeoutMs: config.probeTimeoutMs, effectTimeoutMs: config.effectTimeoutMs }),
    clock: systemClock,
    policy: config.policy,
    log,
    metrics: reconcilerMetrics(telemetry.registry),
    crashAt: config.crashPoint,
    fence: () => lease.holds(),
  });

  // One replica reconciles at a time; the others wait here, consuming nothing, until its lease lapses.
  const held = await lease.acquire(() => log.info('ready (standby): another turn-reconciler holds the lease; taking over when it lapses', { nats: config.natsUrl }));
  log.info(`holding the reconciler lease (epoch ${held.epoch})`, { epoch: held.epoch });
  lease.keep((why) => {
    log.error(`lost the reconciler lease: ${why}; exiting so that only the holder reconciles`, { epoch: lease.epoch() });
    process.exit(1);
  });

  // Turns that were open when we (or everything) went down are picked up before new events.
  const open = await reconciler.hydrate(new JetStreamOpenTurnDirectory(nc));
  log.info(`rebuilt ${open} session(s) with an open turn from the journal`, { sessions: open });
  const consumers = consumerMetrics(telemetry.registry);

  const transport = new JetStreamTransport({
    connection: nc,
    stream: Streams.events,
    consumer: Consumers.turnReconciler,
    maxDeliver: config.maxDeliver,
    log,
    observer: consumers.observer(Streams.events, Consumers.turnReconciler),
  });
  consumers.watch(Streams.events, Consumers.turnReconciler, () => transport.pending());
  const app = await createJetStreamMicroservice(ReconcilerModule.forRoot(reconciler), transport, log);
  onShutdownSignals([
    { name: 'stop consuming and drain in-flight events', run: () => app.close() },
    { name: 'stop sweeping and wait for effects in flight', run: () => reconciler.stop() },
    { name: 'give the reconciler lease up', run: () => lease.release() },
    { name: 'drain the NATS connection', run: () => nc.drain() },
    { name: 'close the store', run: () => store.close() },
    { name: 'stop metrics and flush traces', run: () => telemetry.shutdown() },
  ], log);
  await app.listen();
  reconciler.startSweeping(config.sweepIntervalMs);
  log.info(`ready: consuming ${Streams.events}/${Consumers.turnReconciler}, sweeping every ${config.sweepIntervalMs} ms`, { nats: config.natsUrl, metrics: telemetry.metrics?.url ?? null });
}

/** The embedded default (`sqlite:./.berth/berth.db`) lives in a directory that may not exist yet. */
function ensureSqliteDir(storeUrl: string): void {
  const path = storeUrl.startsWith('sqlite:') ? storeUrl.slice('sqlite:'.length).replace(/^\/\//, '') : '';
  if (path && path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
}

main().catch(failedToStart('turn-reconciler'));
