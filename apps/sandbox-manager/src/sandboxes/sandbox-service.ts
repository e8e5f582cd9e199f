import type { Clock } from '@berth/core';
import type { CommandBus, Logger, SandboxInfo } from '@berth/ports';
import type { SandboxProvisioner } from '@berth/sandbox-lifecycle';
import { leaseExpiresAt } from '@berth/sandbox-domain';
import type { SandboxMetrics } from '@berth/telemetry';
import type { CrashPoints } from '../config/crash-points';
import type { ManagerCommands } from '../sessions/manager-commands';
import { sendReliably } from '../sessions/send-reliably';
import type { BoundSandboxes } from './bound-sandboxes';
import type { EnvironmentSettingsReader } from './environment-settings';
import type { WarmPools } from '../pool/warm-pools';

export type SandboxRequest = Readonly<{ sessionId: string; generation: number; ownerId: string; environmentId: string }>;

export type ProvidedSandbox = Readonly<{ sandboxId: string; generation: number; bound: boolean }>;

/**
 * Gives sessions their sandboxes and takes them away. Starting is idempotent three ways: one
 * promise per (session, generation) in this process, a deterministic container name across
 * processes, and a `BindSandbox` command id derived from both, so the `SandboxRequested` handler
 * and a `TurnStarted` that needs the same sandbox never create two.
 */
export class SandboxService {
  private readonly starting = new Map<string, Promise<ProvidedSandbox>>();
  /** Containers this manager stops on purpose: their `die` is not a death to report. */
  private readonly releasing = new Set<string>();

  constructor(
    private readonly deps: Readonly<{
      provisioner: SandboxProvisioner;
      pools: WarmPools;
      settings: EnvironmentSettingsReader;
      bus: CommandBus;
      commands: ManagerCommands;
      bound: BoundSandboxes;
      clock: Clock;
      crash: CrashPoints;
      log: Logger;
      metrics: Pick<SandboxMetrics, 'warmPoolClaims'>;
    }>,
  ) {}

  provide(request: SandboxRequest): Promise<ProvidedSandbox> {
    const key = `${request.sessionId}:${request.generation}`;
    let started = this.starting.get(key);
    if (started === undefined) {
      started = this.start(request).finally(() => this.starting.delete(key));
      this.starting.set(key, started);
    }
    return started;
  }

  /** A start for this generation is in progress here. */
  isStarting(sessionId: string, generation: number): boolean {
    return this.starting.has(`${sessionId}:${generation}`);
  }

  isReleasing(sandboxId: string): boolean {
    return this.releasing.has(sandboxId);
  }

  /** Stops and removes a sandbox on purpose (terminate, delete, a bind the kernel refused). */
  async release(sandboxId: string): Promise<void> {
    this.releasing.add(sandboxId);
    try {
      this.deps.bound.forget(sandboxId);
      await this.deps.provisioner.release(sandboxId, 2);
    } finally {
      // Docker's die/destroy events for it arrive within moments; after that the name is free again.
      setTimeout(() => this.releasing.delete(sandboxId), 10_000).unref();
    }
  }

  private async start(request: SandboxRequest): Promise<ProvidedSandbox> {
    const { sessionId, generation, environmentId } = request;
    let sandbox: SandboxInfo;
    let warm = false;
    let idle: Awaited<ReturnType<EnvironmentSettingsReader['read']>>['sandbox']['idle'];
    try {
      const settings = await this.deps.settings.read(request.ownerId, environmentId);
      this.deps.pools.ensure(environmentId, settings.sandbox);
      idle = settings.sandbox.idle;
      const provisioned = await this.deps.provisioner.acquire({ sessionId, generation, environmentId, config: settings.sandbox });
      sandbox = provisioned.sandbox;
      warm = provisioned.source === 'warm';
      if (settings.sandbox.warmPool.size > 0) this.deps.metrics.warmPoolClaims.inc({ result: warm ? 'hit' : 'miss' });
    } catch (error) {
      const message = `the sandbox could not be started: ${error instanceof Error ? error.message : String(error)}`;
      this.deps.log.error(message, { session_id: sessionId, generation, err: error });
      await sendReliably(
        this.deps.bus,
        this.deps.commands.make('ReportSandboxStartFailed', sessionId, `startfail_${sessionId}_g${generation}`, { generation, message: message.slice(0, 4096) }),
        this.deps.log,
      );
      throw error;
    }
    this.deps.crash.reached('after-sandbox-start-before-bind');
    const now = this.deps.clock.now();
    const expiresAt = leaseExpiresAt({ lastActivityAt: now, startedAt: now, idle }).toISOString();
    const outcome = await sendReliably(
      this.deps.bus,
      this.deps.commands.make('BindSandbox', sessionId, `bind_${sessionId}_g${generation}`, { sandbox_id: sandbox.name, generation, expires_at: expiresAt, warm }),
      this.deps.log,
    );
    const bound = outcome.ok && (outcome.duplicate || outcome.events.some((e) => e.type === 'SandboxBound'));
    if (!bound) {
      // The kernel no longer wants this generation (terminated, deleted, superseded): give it back.
      this.deps.log.info(`generation ${generation} was not bound; releasing its sandbox`, { session_id: sessionId, generation, sandbox_id: sandbox.name });
      await this.release(sandbox.name);
      return { sandboxId: sandbox.name, generation, bound: false };
    }
    this.deps.bound.track({ sessionId, generation, sandboxId: sandbox.name, idle, startedAt: now });
    return { sandboxId: sandbox.name, generation, bound: true };
  }
}
