import type { CommandOutcome, RecordedEvent, SessionCommand } from '@berth/contracts';
import { systemClock } from '@berth/core';
import type { CommandBus } from '@berth/ports';
import { InMemoryClaimLedger, SandboxProvisioner, WarmPool } from '@berth/sandbox-lifecycle';
import { createSessionKernel } from '@berth/session-kernel';
import { sandboxMetrics } from '@berth/telemetry';
import { InMemorySandboxRuntime, MemoryStore, silentLogger as quiet, type ExecScript } from '@berth/testing';
import { Registry } from 'prom-client';
import { WarmPools } from '../pool/warm-pools';
import { BoundSandboxes } from '../sandboxes/bound-sandboxes';
import { EnvironmentSettingsReader } from '../sandboxes/environment-settings';
import { SandboxService } from '../sandboxes/sandbox-service';
import { noCrashPoints } from '../config/crash-points';
import { ManagerCommands } from '../sessions/manager-commands';
import { SessionEventReactor } from '../sessions/session-event-reactor';
import { SessionFactsReader } from '../sessions/session-facts';
import { RunningTurns } from '../turns/running-turns';
import { TranscriptSync } from '../turns/transcript-sync';
import { TurnRunner } from '../turns/turn-runner';

/**
 * The sandbox-manager's logic wired to the real session kernel in this process, an in-memory
 * store and the in-memory sandbox runtime: each command's events are handed to the reactor the
 * way SESSION_EVT would deliver them. No NATS, no Docker.
 */
export class InMemoryManager implements CommandBus {
  readonly store = new MemoryStore();
  readonly runtime: InMemorySandboxRuntime;
  readonly running = new RunningTurns();
  readonly sent: SessionCommand[] = [];
  readonly reactor: SessionEventReactor;
  readonly sandboxes: SandboxService;
  readonly facts: SessionFactsReader;
  readonly commands = new ManagerCommands(systemClock);
  readonly pool: WarmPool;
  private readonly kernel = createSessionKernel({ journal: this.store.journal, snapshots: this.store.snapshots, sessions: this.store.sessions, clock: systemClock });
  private readonly handling = new Set<Promise<void>>();

  constructor(options: { execScript: ExecScript; model?: { baseUrl: string | null; apiKey: string | null }; warmPoolSize?: number }) {
    this.runtime = new InMemorySandboxRuntime({ execScript: options.execScript });
    const model = { baseUrl: null, apiKey: null, model: null, ...options.model };
    const commands = this.commands;
    let slots = 0;
    const facts = (this.facts = new SessionFactsReader(this.store.journal));
    const settings = new EnvironmentSettingsReader(this.store.environments, { image: 'berth/harness:latest', model, warmPoolSize: options.warmPoolSize });
    const pool = (this.pool = new WarmPool({ runtime: this.runtime, ledger: new InMemoryClaimLedger(), clock: systemClock, nextSlot: () => `slot${++slots}` }));
    const bound = new BoundSandboxes(systemClock);
    const metrics = sandboxMetrics(new Registry(), { turnsRunning: () => this.running.all().length, sandboxes: async () => ({}) });
    const sandboxes = (this.sandboxes = new SandboxService({
      provisioner: new SandboxProvisioner({ runtime: this.runtime, pool }),
      pools: new WarmPools(pool),
      settings,
      bus: this,
      commands,
      bound,
      clock: systemClock,
      crash: noCrashPoints,
      log: quiet,
      metrics,
    }));
    const turns = new TurnRunner({
      runtime: this.runtime,
      bus: this,
      commands,
      transcripts: new TranscriptSync(this.runtime, this.store.transcripts),
      running: this.running,
      secret: (name) => (name === 'BERTH_MODEL_API_KEY' ? model.apiKey : null),
      crash: noCrashPoints,
      log: quiet,
      metrics,
      tuning: { batchDelayMs: 5, interruptGraceMs: 50, interruptDeadlineMs: 300 },
    });
    this.reactor = new SessionEventReactor({ facts, sandboxes, turns, running: this.running, bound, settings, runtime: this.runtime, commands, bus: this, log: quiet, scopeLabels: {} });
  }

  async send(command: SessionCommand): Promise<CommandOutcome> {
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

  events(sessionId: string): Promise<RecordedEvent[]> {
    return this.store.journal.readEvents(sessionId);
  }

  /** Resolves when every delivered event's handler finished (turns included). */
  async settled(): Promise<void> {
    while (this.handling.size > 0) await Promise.allSettled([...this.handling]);
  }

  private deliver(event: RecordedEvent): void {
    const handled = Promise.resolve().then(() => this.route(event));
    const tracked = handled.catch(() => undefined).finally(() => this.handling.delete(tracked));
    this.handling.add(tracked);
  }

  private route(event: RecordedEvent): Promise<void> {
    switch (event.type) {
      case 'SandboxRequested':
        return this.reactor.sandboxRequested(event);
      case 'TurnStarted':
        // As if redelivered: the manager looks for a harness an earlier process started.
        return this.reactor.turnStarted(event, { redelivered: true });
      case 'InterruptRequested':
        return this.reactor.interruptRequested(event);
      case 'ToolUseConfirmed':
        return this.reactor.toolUseConfirmed(event);
      case 'SessionTerminated':
      case 'SessionDeleted':
        return this.reactor.sessionEnded(event);
      case 'SessionPaused':
        return this.reactor.sessionPaused(event);
      case 'SandboxLost':
        return this.reactor.sandboxLost(event);
      default:
        return Promise.resolve();
    }
  }
}
