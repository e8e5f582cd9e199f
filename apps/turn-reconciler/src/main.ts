import 'reflect-metadata';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { Consumers, Streams } from '@berth/contracts';
import { systemClock } from '@berth/core';
import { applyTopology, berthTopology, serviceTopology, connectNats, JetStreamPublisher, NatsCommandBus } from '@berth/nats';
import { createJetStreamMicroservice, JetStreamTransport, loadConfig, onShutdownSignals } from '@berth/nest';
import { createStore } from '@berth/store';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { Logger } from '@nestjs/common';
import { JetStreamOpenTurnDirectory } from './adapters/jetstream-open-turn-directory';
import { NatsSandboxManagerClient } from './adapters/nats-sandbox-manager.client';
import { ReconcilerConfigSchema } from './config/reconciler.config';
import { ReconcilerModule } from './reconciler.module';
import { TurnReconcilerService } from './reconciling/turn-reconciler.service';

/** Composition root: store and NATS adapters in; SESSION_EVT consumer and a sweep timer out. */
async function main(): Promise<void> {
  const log = new Logger('turn-reconciler');
  const config = loadConfig(ReconcilerConfigSchema);
  ensureSqliteDir(config.storeUrl);
  const store = createStore(config.storeUrl);
  await store.init();

  const nc = await connectNats({ url: config.natsUrl, name: 'turn-reconciler', credsFile: config.natsCreds });
  await applyTopology(await jetstreamManager(nc), serviceTopology(berthTopology({ tuning: { ackWaitMs: config.ackWaitMs, maxDeliver: config.maxDeliver } }), 'turn-reconciler'));
  const commands = new NatsCommandBus(nc, new JetStreamPublisher(jetstream(nc)));

  const reconciler = new TurnReconcilerService({
    journal: store.journal,
    transcripts: store.transcripts,
    commands,
    sandboxManager: new NatsSandboxManagerClient(nc, { probeTimeoutMs: config.probeTimeoutMs, effectTimeoutMs: config.effectTimeoutMs }),
    clock: systemClock,
    policy: config.policy,
    log,
    crashAt: config.crashPoint,
  });

  // Turns that were open when we (or everything) went down are picked up before new events.
  const open = await reconciler.hydrate(new JetStreamOpenTurnDirectory(nc));
  log.log(`rebuilt ${open} session(s) with an open turn from the journal`);

  const transport = new JetStreamTransport({
    connection: nc,
    stream: Streams.events,
    consumer: Consumers.turnReconciler,
    maxDeliver: config.maxDeliver,
  });
  const app = await createJetStreamMicroservice(ReconcilerModule.forRoot(reconciler), transport);
  onShutdownSignals([
    { name: 'stop consuming and drain in-flight events', run: () => app.close() },
    { name: 'stop sweeping and wait for effects in flight', run: () => reconciler.stop() },
    { name: 'drain the NATS connection', run: () => nc.drain() },
    { name: 'close the store', run: () => store.close() },
  ]);
  await app.listen();
  reconciler.startSweeping(config.sweepIntervalMs);
  log.log(`ready: consuming ${Streams.events}/${Consumers.turnReconciler}, sweeping every ${config.sweepIntervalMs} ms`);
}

/** The embedded default (`sqlite:./.berth/berth.db`) lives in a directory that may not exist yet. */
function ensureSqliteDir(storeUrl: string): void {
  const path = storeUrl.startsWith('sqlite:') ? storeUrl.slice('sqlite:'.length).replace(/^\/\//, '') : '';
  if (path && path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
}

main().catch((e) => {
  console.error(`turn-reconciler failed to start: ${e instanceof Error ? e.message : String(e)}`);
  process.exit(1);
});
