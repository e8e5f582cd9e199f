import { Consumers, Streams } from '@berth/contracts';
import { randomBytes } from 'node:crypto';
import type { Clock } from '@berth/core';
import { applyTopology, berthTopology, JetStreamPublisher, NatsCommandBus } from '@berth/nats';
import { createJetStreamMicroservice, JetStreamTransport } from '@berth/nest';
import type { BerthStore, CommandBus, Logger, SandboxRuntime } from '@berth/ports';
import { InMemoryClaimLedger, reconcileAtStart, SandboxProvisioner, WarmPool } from '@berth/sandbox-lifecycle';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { consumerMetrics, sandboxMetrics } from '@berth/telemetry';
import type { NatsConnection } from '@nats-io/nats-core';
import type { Registry } from 'prom-client';
import type { INestMicroservice } from '@nestjs/common';
import { noCrashPoints, type CrashPoints } from '../config/crash-points';
import type { ModelDefaults } from '../config/manager.config';
import { WarmPools } from '../pool/warm-pools';
import { ProbeResponder } from '../probe/probe-responder';
import { TurnProbe } from '../probe/turn-probe';
import { TurnQueries } from '../probe/turn-queries';
import { BoundSandboxes } from '../sandboxes/bound-sandboxes';
import { DEFAULT_KEY_SECRET, EnvironmentSettingsReader, isModelKeySecretName } from '../sandboxes/environment-settings';
import { JournalBindings } from '../sandboxes/journal-bindings';
import { SandboxService } from '../sandboxes/sandbox-service';
import { countSandboxStates } from '../sandboxes/sandbox-states';
import { ManagerCommands } from '../sessions/manager-commands';
import { SessionEventReactor } from '../sessions/session-event-reactor';
import { SessionFactsReader } from '../sessions/session-facts';
import { RunningTurns } from '../turns/running-turns';
import { TranscriptSync } from '../turns/transcript-sync';
import { TurnRunner, type TurnTuning } from '../turns/turn-runner';
import { DeathReporter } from '../watchers/death-reporter';
import { LeaseSweeper } from '../watchers/lease-sweeper';
import { SandboxManagerModule } from './sandbox-manager.module';

export type SandboxManagerInput = Readonly<{
  nc: NatsConnection;
  store: Pick<BerthStore, 'journal' | 'environments' | 'transcripts'>;
  runtime: SandboxRuntime;
  clock: Clock;
  log: Logger;
  model: ModelDefaults;
  sandboxImage: string;
  /** Default warm-pool size per environment (0: none). */
  warmPoolSize?: number;
  /** Labels on every container this installation creates (several installations may share an engine). */
  scopeLabels: Readonly<Record<string, string>>;
  /** The model key and any key an environment names, by secret name. */
  secrets?: Readonly<Record<string, string>>;
  crash?: CrashPoints;
  delivery: Readonly<{ ackWaitMs: number; maxDeliver: number; concurrency: number }>;
  leaseSweepMs: number;
  poolSweepMs: number;
  turnTuning?: Partial<TurnTuning>;
  /** Defaults to a NatsCommandBus on `nc`. */
  bus?: CommandBus;
  /** Where the manager's metrics are registered (its /metrics). */
  registry: Registry;
}>;

export type RunningSandboxManager = Readonly<{
  app: INestMicroservice;
  runtime: SandboxRuntime;
  running: RunningTurns;
  /** Stops consuming, lets running turns finish their current step, and stops the watchers. */
  stop(): Promise<void>;
}>;

/**
 * Composes the sandbox-manager from its ports and starts it: adopt what the engine already runs,
 * start the watchers and the probe responder, then consume SESSION_EVT.
 */
export async function startSandboxManager(input: SandboxManagerInput): Promise<RunningSandboxManager> {
  const { nc, store, runtime, clock, log } = input;
  const crash = input.crash ?? noCrashPoints;
  const publisher = new JetStreamPublisher(jetstream(nc));
  const ownBus = input.bus === undefined ? new NatsCommandBus(nc, publisher, { defaultTimeoutMs: 10_000 }) : null;
  const bus = input.bus ?? (ownBus as NatsCommandBus);
  await applyTopology(await jetstreamManager(nc), berthTopology({ tuning: { ackWaitMs: input.delivery.ackWaitMs, maxDeliver: input.delivery.maxDeliver } }));

  const commands = new ManagerCommands(clock);
  const facts = new SessionFactsReader(store.journal);
  const settings = new EnvironmentSettingsReader(store.environments, { image: input.sandboxImage, model: input.model, warmPoolSize: input.warmPoolSize });
  const pool = new WarmPool({
    runtime,
    ledger: new InMemoryClaimLedger(),
    clock,
    nextSlot: () => randomBytes(6).toString('hex'),
    scopeLabels: input.scopeLabels,
    onError: (error, context) => log.warn(`warm pool: ${context}`, { err: error }),
  });
  const pools = new WarmPools(pool);
  const bound = new BoundSandboxes(clock);
  const running = new RunningTurns();
  const metrics = sandboxMetrics(input.registry, {
    turnsRunning: () => running.all().length,
    sandboxes: async () => countSandboxStates(await runtime.list({ 'berth.managed': 'true', ...input.scopeLabels })),
  });
  const sandboxes = new SandboxService({
    provisioner: new SandboxProvisioner({ runtime, pool, scopeLabels: input.scopeLabels }),
    pools,
    settings,
    bus,
    commands,
    bound,
    clock,
    crash,
    log,
    metrics,
  });
  const secrets: Record<string, string> = { ...input.secrets };
  if (input.model.apiKey !== null) secrets[DEFAULT_KEY_SECRET] = input.model.apiKey;
  const turns = new TurnRunner({
    runtime,
    bus,
    commands,
    transcripts: new TranscriptSync(runtime, store.transcripts),
    running,
    secret: (name) => secrets[name] ?? (name !== DEFAULT_KEY_SECRET && isModelKeySecretName(name) ? (process.env[name] ?? null) : null),
    crash,
    log,
    metrics,
    tuning: input.turnTuning,
  });
  const deaths = new DeathReporter({ runtime, sandboxes, bus, commands, pool, log, scopeLabels: input.scopeLabels });
  const reactor = new SessionEventReactor({ facts, sandboxes, turns, running, bound, settings, runtime, commands, bus, log, scopeLabels: input.scopeLabels });

  const plan = await reconcileAtStart({
    runtime,
    bindings: new JournalBindings(runtime, facts, input.scopeLabels),
    pool,
    clock,
    scopeLabels: input.scopeLabels,
    onDead: (death) => deaths.report(death),
  });
  for (const adopted of plan.adopt) {
    const { state } = await facts.load(adopted.sessionId);
    const idle = (await settings.read(state.owner_id, state.environment_id)).sandbox.idle;
    bound.track({ sessionId: adopted.sessionId, generation: adopted.generation, sandboxId: adopted.sandbox.name, idle, startedAt: clock.now() });
  }
  if (plan.adopt.length + plan.dead.length + plan.reap.length > 0) {
    log.info(`start: adopted ${plan.adopt.length} sandbox(es), reported ${plan.dead.length} dead, removed ${plan.reap.length}`);
  }

  const watching = new AbortController();
  const deathWatch = deaths.run(watching.signal);
  const leases = new LeaseSweeper({ bound, running, sandboxes, bus, commands, clock, log });
  leases.start(input.leaseSweepMs);
  const poolSweep = setInterval(() => void pool.sweep().catch((e: unknown) => log.warn('warm pool sweep failed', { err: e })), input.poolSweepMs);
  poolSweep.unref();
  const probe = new TurnProbe({ runtime, sandboxes, running, facts });
  const queries = new TurnQueries({ probe, reactor, runtime, facts, transcripts: store.transcripts, bus, commands, log });
  const probes = new ProbeResponder(nc, probe, queries, log);
  probes.start();

  const consumers = consumerMetrics(input.registry);
  const transport = new JetStreamTransport({
    connection: nc,
    stream: Streams.events,
    consumer: Consumers.sandboxManager,
    maxDeliver: input.delivery.maxDeliver,
    concurrency: input.delivery.concurrency,
    log,
    observer: consumers.observer(Streams.events, Consumers.sandboxManager),
  });
  consumers.watch(Streams.events, Consumers.sandboxManager, () => transport.pending());
  const heartbeatMs = Math.max(100, Math.floor(input.delivery.ackWaitMs / 3));
  const app = await createJetStreamMicroservice(SandboxManagerModule.forRoot(reactor, heartbeatMs), transport, log);
  await app.listen();

  return {
    app,
    runtime,
    running,
    async stop() {
      probes.stop();
      await app.close();
      await leases.stop();
      clearInterval(poolSweep);
      watching.abort();
      await deathWatch;
      await pool.idle();
      ownBus?.close();
    },
  };
}
