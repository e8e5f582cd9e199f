import { Consumers, Streams } from '@berth/contracts';
import { randomBytes } from 'node:crypto';
import type { Clock } from '@berth/core';
import { applyTopology, berthTopology, serviceTopology, JetStreamPublisher, NatsCommandBus } from '@berth/nats';
import { createJetStreamMicroservice, JetStreamTransport } from '@berth/nest';
import type { BerthStore, CommandBus, Logger, SandboxImages, SandboxRuntime, SecretBox, SessionWorkspaces, WorkspaceSnapshots } from '@berth/ports';
import { LeaseLock, reconcileAtStart, SandboxProvisioner, sweepImageBuilds, WarmPool } from '@berth/sandbox-lifecycle';
import { DEFAULT_SANDBOX_DEFAULTS, NO_MIRRORS, type PackageMirrors } from '@berth/sandbox-domain';
import type { ManagerPolicy, SessionView } from '@berth/sandbox-workflow';
import { consumerMetrics, sandboxMetrics } from '@berth/telemetry';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import type { INestMicroservice } from '@nestjs/common';
import type { Registry } from 'prom-client';
import { noCrashPoints, type CrashPoints } from '../config/crash-points';
import { WarmPools } from '../pool/warm-pools';
import { ProbeResponder } from '../probe/probe-responder';
import { TurnProbe } from '../probe/turn-probe';
import { TurnQueries } from '../probe/turn-queries';
import { AcquisitionLeases } from '../sandboxes/acquisition-leases';
import { BoundSandboxes } from '../sandboxes/bound-sandboxes';
import { EnvironmentSettingsReader } from '../sandboxes/environment-settings';
import { JournalBindings } from '../sandboxes/journal-bindings';
import { PackageImages } from '../sandboxes/package-images';
import { SandboxService } from '../sandboxes/sandbox-service';
import { countSandboxStates } from '../sandboxes/sandbox-states';
import { OutputCapture } from '../session-files/output-capture';
import { RepositoryCloner } from '../session-files/repository-cloner';
import { ResourceMounter } from '../session-files/resource-mounter';
import { SessionFiles } from '../session-files/session-files';
import { WorkspaceReader } from '../session-files/workspace-reader';
import { PinnedAgents } from '../sessions/pinned-agents';
import { VaultVariables } from '../sessions/vault-variables';
import { TranscriptSync } from '../turns/transcript-sync';
import { NO_WORKSPACE_SNAPSHOTS, TurnCheckpoints } from '../turns/turn-checkpoints';
import type { TurnTuning } from '../turns/turn-execution';
import { TurnExecutions } from '../turns/turn-executions';
import { DeathReporter } from '../watchers/death-reporter';
import { LeaseSweeper } from '../watchers/lease-sweeper';
import { managerSender } from '../workflow/manager-sender';
import { SandboxManagerShell } from '../workflow/sandbox-manager-shell';
import { CustomToolSockets } from '../custom-tools/custom-tool-sockets';
import { managerInstanceId } from './instance-id';
import { ControlEventsModule, TurnEventsModule } from './sandbox-manager.modules';

export type SandboxManagerInput = Readonly<{
  nc: NatsConnection;
  store: Pick<BerthStore, 'journal' | 'environments' | 'agents' | 'vaults' | 'transcripts' | 'files' | 'blobs' | 'secrets' | 'sandboxClaims' | 'leases'>;
  runtime: SandboxRuntime;
  /** Opens repository tokens (sealed at rest by the gateway) just before a clone. */
  box: SecretBox;
  /** The host path of a sandbox's egress socket: repositories are cloned through it. */
  egressSocketOf: (sandboxId: string) => Promise<string | null>;
  /** Where sessions' workspaces live (they outlive sandboxes). */
  workspaces: SessionWorkspaces;
  /** Per-turn snapshots of those workspaces (what a fork starts from); default: none. */
  snapshots?: WorkspaceSnapshots;
  /** Default size limit of a session's workspace, when its environment sets none. */
  workspaceBytes?: number;
  /** Builds the images of environments with `packages`. */
  images: SandboxImages;
  /** The operator's package mirrors the builds install from (none: the public registries). */
  packageMirrors?: PackageMirrors;
  clock: Clock;
  log: Logger;
  sandboxImage: string;
  /** Default warm-pool size per environment (0: none). */
  warmPoolSize?: number;
  /** Labels on every container this installation creates (several installations may share an engine). */
  scopeLabels: Readonly<Record<string, string>>;
  /** Environments may use `config.network: host` (operator opt-in; otherwise such a sandbox fails to start). */
  allowHostNetwork?: boolean;
  crash?: CrashPoints;
  /** `concurrency`: turns run at once (the turns consumer); `controlConcurrency`: control events handled at once. */
  delivery: Readonly<{ ackWaitMs: number; maxDeliver: number; concurrency: number; controlConcurrency: number }>;
  leaseSweepMs: number;
  /** How long a sandbox request waits for an engine that does not answer (`BERTH_ENGINE_WAIT_MS`; default 60 s). */
  engineWaitMs?: number;
  /** The warm pool's sweep, the lease sweep's look for bound sandboxes no manager here tracks, and the sweep of image builds dead managers left. */
  poolSweepMs: number;
  turnTuning?: Partial<TurnTuning>;
  policy?: ManagerPolicy;
  /** Defaults to a NatsCommandBus on `nc`. */
  bus?: CommandBus;
  /** Where the manager's metrics are registered (its /metrics). */
  registry: Registry;
  /** Sandboxes have an egress socket on this machine (`egressSocketOf`): custom tools sockets are served beside it. False: none (an agent with custom tools is refused). */
  egressSockets: boolean;
}>;

export type RunningSandboxManager = Readonly<{
  apps: readonly INestMicroservice[];
  runtime: SandboxRuntime;
  turns: TurnExecutions;
  /** Stops consuming, lets running turns finish their current step, and stops the watchers. */
  stop(): Promise<void>;
}>;

/**
 * Composes the sandbox-manager from its ports and starts it: adopt what the engine already runs,
 * start the watchers and the probe responder, then consume SESSION_EVT through two durable
 * consumers — turns, and control events — so neither waits for the other.
 */
export async function startSandboxManager(input: SandboxManagerInput): Promise<RunningSandboxManager> {
  const { nc, store, runtime, clock, log } = input;
  const crash = input.crash ?? noCrashPoints;
  const publisher = new JetStreamPublisher(jetstream(nc));
  const ownBus = input.bus === undefined ? new NatsCommandBus(nc, publisher, { defaultTimeoutMs: 10_000 }) : null;
  const bus = input.bus ?? (ownBus as NatsCommandBus);
  await applyTopology(await jetstreamManager(nc), serviceTopology(berthTopology({ tuning: { ackWaitMs: input.delivery.ackWaitMs, maxDeliver: input.delivery.maxDeliver } }), 'sandbox-manager'));

  const send = managerSender(bus, clock, log);
  const settings = new EnvironmentSettingsReader(store.environments, {
    sandbox: {
      ...DEFAULT_SANDBOX_DEFAULTS,
      image: input.sandboxImage,
      warmPoolSize: input.warmPoolSize ?? DEFAULT_SANDBOX_DEFAULTS.warmPoolSize,
      workspaceBytes: input.workspaceBytes ?? DEFAULT_SANDBOX_DEFAULTS.workspaceBytes,
    },
  });
  const { workspaces } = input;
  const snapshots = input.snapshots ?? NO_WORKSPACE_SNAPSHOTS;
  const files = new SessionFiles({
    runtime,
    workspaces,
    snapshots,
    mounter: new ResourceMounter({ runtime, files: store.files, blobs: store.blobs, secrets: store.secrets, box: input.box, cloner: new RepositoryCloner(), egressSocketOf: input.egressSocketOf, log }),
    capture: new OutputCapture({ runtime, files: store.files, blobs: store.blobs, clock }),
    blobs: store.blobs,
    send,
    log,
  });
  const pool = new WarmPool({
    runtime,
    workspaces,
    claims: store.sandboxClaims,
    clock,
    nextSlot: () => randomBytes(6).toString('hex'),
    scopeLabels: input.scopeLabels,
    onError: (error, context) => log.warn(`warm pool: ${context}`, { err: error }),
  });
  const bound = new BoundSandboxes(clock);
  const instance = managerInstanceId();
  // Read at scrape time: `turns` is assigned before the first scrape can happen.
  const metrics = sandboxMetrics(input.registry, {
    turnsRunning: () => turns.unsettled(),
    sandboxes: async () => countSandboxStates(await runtime.list({ 'berth.managed': 'true', ...input.scopeLabels })),
  });
  const sandboxes = new SandboxService({
    runtime,
    provisioner: new SandboxProvisioner({ runtime, workspaces, pool, scopeLabels: input.scopeLabels }),
    pools: new WarmPools(pool),
    settings,
    images: new PackageImages(input.images, log, input.packageMirrors ?? NO_MIRRORS),
    bound,
    clock,
    crash,
    log,
    allowHostNetwork: input.allowHostNetwork ?? false,
    metrics,
    scopeLabels: input.scopeLabels,
    files,
    acquisitions: new AcquisitionLeases(new LeaseLock(store.leases, instance, clock)),
    engineWaitMs: input.engineWaitMs,
  });
  const customTools: CustomToolSockets | null = input.egressSockets ? new CustomToolSockets({ egressSocketOf: input.egressSocketOf, view: (sessionId): Promise<SessionView> => shell.view(sessionId), log }) : null;
  const turns = new TurnExecutions({
    runtime,
    customTools,
    journal: store.journal,
    settings,
    agents: new PinnedAgents(store.agents),
    vaultVariables: new VaultVariables(store.vaults),
    transcripts: new TranscriptSync(runtime, store.transcripts),
    checkpoints: new TurnCheckpoints({ snapshots, transcripts: store.transcripts, settings, log }),
    files,
    softWorkspaceLimit: workspaces.kind !== 'loop',
    send,
    crash,
    log,
    metrics,
    now: () => clock.now().toISOString(),
    tuning: input.turnTuning,
  });
  const shell = new SandboxManagerShell({ journal: store.journal, send, sandboxes, turns, files, bound, settings, clock, log, policy: input.policy, customTools });
  const deaths = new DeathReporter({ runtime, sandboxes, send, pool, log, scopeLabels: input.scopeLabels });

  const journalBindings = new JournalBindings(runtime, (sessionId) => shell.view(sessionId), input.scopeLabels);
  const leases = new LeaseSweeper({
    bound,
    turns,
    sandboxes,
    send,
    journal: store.journal,
    view: (sessionId) => shell.view(sessionId),
    bindings: journalBindings,
    runtime,
    settings,
    scopeLabels: input.scopeLabels,
    clock,
    log,
  });
  const plan = await reconcileAtStart({
    runtime,
    bindings: journalBindings,
    requests: journalBindings,
    pool,
    workspaces,
    clock,
    scopeLabels: input.scopeLabels,
    onDead: (death) => deaths.report(death),
  });
  for (const adopted of plan.adopt) await leases.adopt({ sessionId: adopted.sessionId, generation: adopted.generation, sandboxId: adopted.sandbox.name });
  if (plan.adopt.length + plan.dead.length + plan.reap.length > 0) {
    log.info(`start: adopted ${plan.adopt.length} sandbox(es), reported ${plan.dead.length} dead, removed ${plan.reap.length}`);
  }

  // One at a time: a sweep still running when the next is due is not started again. A sweep is given
  // up after a period (a frozen engine never answers): whatever it missed, the next one removes.
  let buildSweep: Promise<void> | null = null;
  const sweepBuilds = (): Promise<void> =>
    (buildSweep ??= Promise.race([
      sweepImageBuilds({ images: input.images, leases: store.leases, clock }),
      new Promise<never>((_, reject) => {
        setTimeout(() => reject(new Error(`no answer within ${input.poolSweepMs} ms`)), input.poolSweepMs).unref();
      }),
    ])
      .then((removed) => {
        if (removed.length > 0) log.info(`image build sweep: removed ${removed.length} build container(s) a dead sandbox-manager left`, { containers: removed });
      })
      .catch((e: unknown) => log.warn('image build sweep failed', { err: e }))
      .finally(() => (buildSweep = null)));
  await sweepBuilds();

  const watching = new AbortController();
  const deathWatch = deaths.run(watching.signal);
  leases.start(input.leaseSweepMs, input.poolSweepMs);
  const poolSweep = setInterval(() => {
    void pool.sweep().catch((e: unknown) => log.warn('warm pool sweep failed', { err: e }));
    void sweepBuilds();
  }, input.poolSweepMs);
  poolSweep.unref();
  const view = (sessionId: string) => shell.view(sessionId);
  const probe = new TurnProbe({ runtime, sandboxes, turns, view });
  const queries = new TurnQueries({ probe, shell, runtime, transcripts: store.transcripts, send });
  const workspaceReader = new WorkspaceReader({ runtime, workspaces, blobs: store.blobs, view, settings, scopeLabels: input.scopeLabels });
  const probes = new ProbeResponder(nc, probe, queries, workspaceReader, log);
  probes.start();

  const heartbeatMs = Math.max(100, Math.floor(input.delivery.ackWaitMs / 3));
  const consumers = consumerMetrics(input.registry);
  const consumer = (name: string, concurrency: number) => {
    const transport = new JetStreamTransport({
      connection: nc,
      stream: Streams.events,
      consumer: name,
      maxDeliver: input.delivery.maxDeliver,
      concurrency,
      log,
      observer: consumers.observer(Streams.events, name),
    });
    consumers.watch(Streams.events, name, () => transport.pending());
    return transport;
  };
  const apps = [
    await createJetStreamMicroservice(ControlEventsModule.forRoot(shell, heartbeatMs), consumer(Consumers.sandboxManagerControl, input.delivery.controlConcurrency), log),
    await createJetStreamMicroservice(TurnEventsModule.forRoot(shell, heartbeatMs), consumer(Consumers.sandboxManagerTurns, input.delivery.concurrency), log),
  ];
  for (const app of apps) await app.listen();

  return {
    apps,
    runtime,
    turns,
    async stop() {
      probes.stop();
      for (const app of apps) await app.close();
      shell.stop();
      await customTools?.stop();
      await leases.stop();
      clearInterval(poolSweep);
      await buildSweep;
      watching.abort();
      await deathWatch;
      await pool.idle();
      ownBus?.close();
    },
  };
}
