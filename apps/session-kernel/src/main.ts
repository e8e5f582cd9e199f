import 'reflect-metadata';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { Consumers, Streams } from '@berth/contracts';
import { systemClock } from '@berth/core';
import { applyTopology, berthTopology, serviceTopology, connectNats, JetStreamPublisher, oldestMessageSeq } from '@berth/nats';
import { createJetStreamMicroservice, JetStreamTransport, loadConfig, onShutdownSignals } from '@berth/nest';
import { createSessionKernel } from '@berth/session-kernel';
import { createStore } from '@berth/store';
import { consumerMetrics, failedToStart, kernelMetrics, startServiceTelemetry } from '@berth/telemetry';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { CommandOrder } from './commands/command-order';
import { CommandProcessor } from './commands/command-processor';
import { SessionLocks } from './commands/session-locks';
import { crashPointsArmedAt } from './config/crash-points';
import { KernelConfigSchema } from './config/kernel.config';
import { sessionErrorForDeadLetter } from './dead-letters/raise-session-error';
import { KernelModule } from './kernel.module';
import { EventOutbox } from './outbox/event-outbox';

/** Composition root: real adapters in, one JetStream consumer out. */
async function main(): Promise<void> {
  const telemetry = await startServiceTelemetry('session-kernel');
  const { log } = telemetry;
  const metrics = kernelMetrics(telemetry.registry);
  const config = loadConfig(KernelConfigSchema);
  ensureSqliteDir(config.storeUrl);
  const store = createStore(config.storeUrl);
  await store.init();

  const nc = await connectNats({ url: config.natsUrl, name: 'session-kernel', credsFile: config.natsCreds });
  await applyTopology(await jetstreamManager(nc), serviceTopology(berthTopology({ tuning: { ackWaitMs: config.ackWaitMs, maxDeliver: config.maxDeliver }, replicas: config.streamReplicas }), 'session-kernel'));

  const crash = crashPointsArmedAt(config.crashPoint);
  const locks = new SessionLocks();
  const kernel = createSessionKernel({
    journal: store.journal,
    snapshots: store.snapshots,
    clock: systemClock,
    onBestEffortFailure: (what, sessionId, error) => log.warn(`${what} failed (the journal is used instead)`, { session_id: sessionId, err: error }),
    observer: { decided: (s) => metrics.decideSeconds.observe(s), committed: (s) => metrics.commitSeconds.observe(s) },
  });
  const owners = async (sessionId: string) => (await kernel.load(sessionId)).state.owner_id;
  const outbox = new EventOutbox(store.journal, owners, new JetStreamPublisher(jetstream(nc)), locks, crash, log, metrics);
  const processor = new CommandProcessor({
    kernel,
    outbox,
    locks,
    order: new CommandOrder({ oldest: (subject) => oldestMessageSeq(nc, Streams.commands, subject), maxWaitMs: 2 * config.ackWaitMs, workingEveryMs: Math.floor(config.ackWaitMs / 3), log }),
    replies: nc,
    crash,
    log,
    metrics,
  });

  // Whatever a crash left between commit and publish goes out before new commands are taken.
  const relayed = await outbox.relay();
  if (relayed > 0) log.info(`outbox: republished ${relayed} event(s) left unpublished`, { events: relayed });
  outbox.startRelay(config.relayIntervalMs);

  const consumers = consumerMetrics(telemetry.registry);
  const transport = new JetStreamTransport({
    connection: nc,
    stream: Streams.commands,
    consumer: Consumers.kernel,
    maxDeliver: config.maxDeliver,
    concurrency: config.concurrency,
    retry: { baseDelayMs: config.retryBaseMs, maxDelayMs: 30_000 },
    unhandled: 'dead-letter',
    onDeadLetter: async (deadLetter) => {
      const command = sessionErrorForDeadLetter(deadLetter, systemClock);
      if (command) await processor.apply(command);
    },
    log,
    observer: consumers.observer(Streams.commands, Consumers.kernel),
  });
  consumers.watch(Streams.commands, Consumers.kernel, () => transport.pending());
  const app = await createJetStreamMicroservice(KernelModule.forRoot(processor), transport, log);
  onShutdownSignals([
    { name: 'stop consuming and drain in-flight commands', run: () => app.close() },
    { name: 'stop the outbox relay', run: () => outbox.stopRelay() },
    { name: 'drain the NATS connection', run: () => nc.drain() },
    { name: 'close the store', run: () => store.close() },
    { name: 'stop metrics and flush traces', run: () => telemetry.shutdown() },
  ], log);
  await app.listen();
  log.info(`ready: consuming ${Streams.commands}/${Consumers.kernel}`, { nats: config.natsUrl, store: config.storeUrl, metrics: telemetry.metrics?.url ?? null });
}

/** The embedded default (`sqlite:./.berth/berth.db`) lives in a directory that may not exist yet. */
function ensureSqliteDir(storeUrl: string): void {
  const path = storeUrl.startsWith('sqlite:') ? storeUrl.slice('sqlite:'.length).replace(/^\/\//, '') : '';
  if (path && path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
}

main().catch(failedToStart('session-kernel'));
