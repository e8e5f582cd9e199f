import type { AgentConfig, CommandData, CommandOutcome, CommandType, RecordedEvent, SessionCommand } from '@berth/contracts';
import { commandFor, testAgentConfig } from '@berth/contracts/testing';
import { systemClock } from '@berth/core';
import type { CommandBus } from '@berth/ports';
import { LeaseLock, SandboxProvisioner, WarmPool } from '@berth/sandbox-lifecycle';
import { createSessionKernel } from '@berth/session-kernel';
import { DEFAULT_SANDBOX_DEFAULTS, NO_MIRRORS } from '@berth/sandbox-domain';
import { sandboxMetrics } from '@berth/telemetry';
import { InMemorySandboxImages, InMemorySandboxRuntime, InMemoryWorkspaces, MemoryStore, silentLogger as quiet, type ExecScript } from '@berth/testing';
import { UnconfiguredSecretBox } from '@berth/secrets';
import { Registry } from 'prom-client';
import { CONTROL_EVENT_TYPES } from '../app/control-events.controller';
import { noCrashPoints } from '../config/crash-points';
import { WarmPools } from '../pool/warm-pools';
import { BoundSandboxes } from '../sandboxes/bound-sandboxes';
import { EnvironmentSettingsReader } from '../sandboxes/environment-settings';
import { PackageImages } from '../sandboxes/package-images';
import { PinnedAgents } from '../sessions/pinned-agents';
import { VaultVariables } from '../sessions/vault-variables';
import { AcquisitionLeases } from '../sandboxes/acquisition-leases';
import { SandboxService } from '../sandboxes/sandbox-service';
import { OutputCapture } from '../session-files/output-capture';
import { RepositoryCloner } from '../session-files/repository-cloner';
import { ResourceMounter } from '../session-files/resource-mounter';
import { SessionFiles } from '../session-files/session-files';
import { WorkspaceReader } from '../session-files/workspace-reader';
import { TranscriptSync } from '../turns/transcript-sync';
import { NO_WORKSPACE_SNAPSHOTS, TurnCheckpoints } from '../turns/turn-checkpoints';
import { TurnExecutions } from '../turns/turn-executions';
import { managerSender, type SendManagerCommand } from '../workflow/manager-sender';
import { SandboxManagerShell } from '../workflow/sandbox-manager-shell';

const DELIVERED = new Set<string>(['TurnStarted', ...CONTROL_EVENT_TYPES]);

/**
 * The sandbox-manager's logic wired to the real session kernel in this process, an in-memory
 * store and the in-memory sandbox runtime: each command's events are handed to the shell the
 * way the two SESSION_EVT consumers would deliver them. No NATS, no Docker.
 */
export type InMemoryManagerOptions = Readonly<{ execScript: ExecScript; warmPoolSize?: number; allowHostNetwork?: boolean; engineWaitMs?: number }>;

export class InMemoryManager implements CommandBus {
  readonly store: MemoryStore;
  readonly runtime: InMemorySandboxRuntime;
  readonly images: InMemorySandboxImages;
  readonly sent: SessionCommand[] = [];
  readonly shell: SandboxManagerShell;
  readonly sandboxes: SandboxService;
  readonly turns: TurnExecutions;
  readonly pool: WarmPool;
  readonly workspaces: InMemoryWorkspaces;
  readonly workspaceReader: WorkspaceReader;
  readonly settings: EnvironmentSettingsReader;
  readonly bound = new BoundSandboxes(systemClock);
  /** The manager's metrics, as its /metrics would serve them. */
  readonly registry = new Registry();
  readonly sendCommand: SendManagerCommand;
  /** The agent `createSessionData` pins (owner_1's agent_1 version 1) is in the store from the start. */
  readonly ready: Promise<void>;
  private readonly kernel: ReturnType<typeof createSessionKernel>;
  private readonly handling = new Set<Promise<void>>();
  private crashed = false;

  /** `previous`: a manager process that died (see `restart`); its store and sandboxes live on. */
  constructor(
    private readonly options: InMemoryManagerOptions,
    previous?: InMemoryManager,
  ) {
    this.store = previous?.store ?? new MemoryStore();
    this.runtime = previous?.runtime ?? new InMemorySandboxRuntime({ execScript: options.execScript });
    const workspaces = (this.workspaces = previous?.workspaces ?? new InMemoryWorkspaces());
    this.images = previous?.images ?? new InMemorySandboxImages();
    this.kernel = createSessionKernel({ journal: this.store.journal, snapshots: this.store.snapshots, clock: systemClock });
    let slots = 0;
    const settings = (this.settings = new EnvironmentSettingsReader(this.store.environments, {
      sandbox: { ...DEFAULT_SANDBOX_DEFAULTS, warmPoolSize: options.warmPoolSize ?? 0 },
    }));
    const pool = (this.pool = new WarmPool({ runtime: this.runtime, workspaces, claims: this.store.sandboxClaims, clock: systemClock, nextSlot: () => `slot${++slots}` }));
    const send = (this.sendCommand = managerSender(this, systemClock, quiet));
    const files = new SessionFiles({
      runtime: this.runtime,
      workspaces,
      snapshots: NO_WORKSPACE_SNAPSHOTS,
      mounter: new ResourceMounter({
        runtime: this.runtime,
        files: this.store.files,
        blobs: this.store.blobs,
        secrets: this.store.secrets,
        box: new UnconfiguredSecretBox(),
        cloner: new RepositoryCloner(),
        // The in-memory runtime has no egress: its sandboxes cannot clone.
        egressSocketOf: async () => null,
        log: quiet,
      }),
      capture: new OutputCapture({ runtime: this.runtime, files: this.store.files, blobs: this.store.blobs, clock: systemClock }),
      blobs: this.store.blobs,
      send,
      log: quiet,
    });
    const metrics = sandboxMetrics(this.registry, { turnsRunning: () => this.turns.unsettled(), sandboxes: async () => ({}) });
    this.sandboxes = new SandboxService({
      runtime: this.runtime,
      provisioner: new SandboxProvisioner({ runtime: this.runtime, workspaces, pool }),
      pools: new WarmPools(pool),
      settings,
      images: new PackageImages(this.images, quiet, NO_MIRRORS),
      bound: this.bound,
      clock: systemClock,
      crash: noCrashPoints,
      log: quiet,
      allowHostNetwork: options.allowHostNetwork ?? false,
      metrics,
      scopeLabels: {},
      files,
      acquisitions: new AcquisitionLeases(new LeaseLock(this.store.leases, 'in-memory-manager', systemClock)),
      engineWaitMs: options.engineWaitMs,
    });
    this.turns = new TurnExecutions({
      runtime: this.runtime,
      journal: this.store.journal,
      settings,
      agents: new PinnedAgents(this.store.agents),
      vaultVariables: new VaultVariables(this.store.vaults),
      transcripts: new TranscriptSync(this.runtime, this.store.transcripts),
      checkpoints: new TurnCheckpoints({ snapshots: NO_WORKSPACE_SNAPSHOTS, transcripts: this.store.transcripts, settings, log: quiet }),
      files,
      send,
      crash: noCrashPoints,
      log: quiet,
      metrics,
      now: () => new Date().toISOString(),
      tuning: { interruptGraceMs: 50 },
      customTools: null,
    });
    this.shell = new SandboxManagerShell({
      journal: this.store.journal,
      send,
      sandboxes: this.sandboxes,
      turns: this.turns,
      files,
      bound: this.bound,
      settings,
      clock: systemClock,
      log: quiet,
      policy: { interruptDeadlineMs: 300 },
      customTools: null,
    });
    this.workspaceReader = new WorkspaceReader({ runtime: this.runtime, workspaces, blobs: this.store.blobs, view: (id) => this.shell.view(id), settings, scopeLabels: {} });
    this.ready = previous?.ready ?? this.defineAgentVersion(1, testAgentConfig());
  }

  /** Stores a version of owner_1's agent_1 (versions go 1, 2, …). */
  async defineAgentVersion(version: number, config: AgentConfig): Promise<void> {
    const at = new Date().toISOString();
    await this.store.agents.putVersion(
      { id: 'agent_1', owner_id: 'owner_1', version, name: 'test-agent', config, created_at: at, updated_at: at, archived_at: null },
      version - 1,
    );
  }

  /**
   * This process dies as under `kill -9`: it stops following its turns and nothing it still tries
   * to send reaches the kernel. A new manager takes over the same store and sandboxes, whose
   * harnesses keep running.
   */
  restart(): InMemoryManager {
    this.crashed = true;
    for (const execution of this.turns.all()) execution.abandon();
    this.shell.stop();
    return new InMemoryManager(this.options, this);
  }

  async send(command: SessionCommand): Promise<CommandOutcome> {
    if (this.crashed) throw new Error('this manager process is dead');
    await this.ready;
    this.sent.push(command);
    const outcome = await this.kernel.execute(command);
    if (outcome.ok && outcome.events.length > 0) {
      const seqs = outcome.events.map((e) => e.seq);
      const appended = await this.store.journal.readEvents(command.meta.session_id, { afterSeq: Math.min(...seqs) - 1, limit: seqs.length });
      for (const event of appended) this.deliver(event);
    }
    return outcome;
  }

  async dispatch(command: SessionCommand): Promise<void> {
    await this.send(command);
  }

  /** A command from a test (the user or another service), in the kernel's envelope. */
  command<T extends CommandType>(type: T, sessionId: string, data: CommandData<T>): Promise<CommandOutcome> {
    return this.send(commandFor(type, sessionId, data));
  }

  events(sessionId: string): Promise<RecordedEvent[]> {
    return this.store.journal.readEvents(sessionId);
  }

  /** Resolves when every delivered event's handler finished (turns included). */
  async settled(): Promise<void> {
    while (this.handling.size > 0) await Promise.allSettled([...this.handling]);
  }

  /** Delivers an event again, as JetStream would after a crash (the handler's promise is returned). */
  redeliver(event: RecordedEvent): Promise<void> {
    return this.handle(event, true);
  }

  private deliver(event: RecordedEvent): void {
    if (!DELIVERED.has(event.type) || this.crashed) return;
    // As if redelivered: the manager looks for a harness an earlier process started.
    const handled = Promise.resolve().then(() => this.handle(event, event.type === 'TurnStarted'));
    const tracked = handled.catch(() => undefined).finally(() => this.handling.delete(tracked));
    this.handling.add(tracked);
  }

  private async handle(event: RecordedEvent, redelivered: boolean): Promise<void> {
    await this.shell.deliver(event, redelivered);
    if (event.type === 'TurnStarted') await this.shell.turnSettled(event.session_id, event.data.turn_id);
  }
}
