import { isUnreachable, type Clock } from '@berth/core';
import type { Logger, SandboxRuntime } from '@berth/ports';
import type { SandboxProvisioner } from '@berth/sandbox-lifecycle';
import { leaseExpiresAt, SandboxLabels } from '@berth/sandbox-domain';
import type { SandboxMetrics } from '@berth/telemetry';
import type { AcquireSandbox, ReleaseSandboxes, SandboxAcquired, SandboxAcquireFailed } from '@berth/sandbox-workflow';
import type { CrashPoints } from '../config/crash-points';
import type { WarmPools } from '../pool/warm-pools';
import type { SessionFiles } from '../session-files/session-files';
import type { BoundSandboxes } from './bound-sandboxes';
import type { EnvironmentSettingsReader } from './environment-settings';
import type { AcquisitionLeases } from './acquisition-leases';
import type { PackageImages } from './package-images';

/** An environment stored with `network: host` (or made before the operator turned it off) gets no sandbox. */
export const HOST_NETWORK_DISABLED =
  'config.network "host" is disabled on this server (sandboxes on the host network reach the platform); set config.network to "egress" (the default), or start the sandbox-manager with BERTH_ALLOW_HOST_NETWORK=true';

/** A sandbox request waits this long for an engine that does not answer before its turn fails. */
export const ENGINE_WAIT_MS = 60_000;
const ENGINE_RETRY_MS = 1_000;
const ENGINE_RETRY_MAX_MS = 5_000;

/**
 * Gets sessions their containers and takes them away. Getting one is idempotent four ways: one
 * acquisition per (session, generation) in this process, one per session at a time across the
 * managers sharing the store (`AcquisitionLeases`), a deterministic container name across
 * processes (a restarted manager finds the container it started), and a `BindSandbox` id derived
 * from both (the workflow's), so a sandbox request and a turn that needs the same sandbox never
 * create two. A container is bound only once its session files are in place (`SessionFiles.prepare`).
 */
export class SandboxService {
  private readonly acquiring = new Map<string, Promise<SandboxAcquired | SandboxAcquireFailed>>();
  /** Containers this manager stops on purpose: their `die` is not a death to report. */
  private readonly releasing = new Set<string>();

  constructor(
    private readonly deps: Readonly<{
      runtime: SandboxRuntime;
      provisioner: SandboxProvisioner;
      pools: WarmPools;
      settings: EnvironmentSettingsReader;
      images: PackageImages;
      bound: BoundSandboxes;
      clock: Clock;
      crash: CrashPoints;
      log: Logger;
      metrics: Pick<SandboxMetrics, 'warmPoolClaims'>;
      allowHostNetwork: boolean;
      scopeLabels: Readonly<Record<string, string>>;
      files: SessionFiles;
      acquisitions: AcquisitionLeases;
      /** How long a sandbox request waits for an engine that does not answer (`BERTH_ENGINE_WAIT_MS`; default `ENGINE_WAIT_MS`). */
      engineWaitMs?: number;
    }>,
  ) {}

  acquire(o: AcquireSandbox): Promise<SandboxAcquired | SandboxAcquireFailed> {
    const key = `${o.session_id}:${o.generation}`;
    let acquiring = this.acquiring.get(key);
    if (acquiring === undefined) {
      acquiring = this.start(o).finally(() => this.acquiring.delete(key));
      this.acquiring.set(key, acquiring);
    }
    return acquiring;
  }

  /** A container for this generation is being started here. */
  isStarting(sessionId: string, generation: number): boolean {
    return this.acquiring.has(`${sessionId}:${generation}`);
  }

  isReleasing(sandboxId: string): boolean {
    return this.releasing.has(sandboxId);
  }

  /**
   * Stops and removes the named containers, and with `whole_session` every container labelled with
   * the session; with `remove_workspace`, then the session's workspace (no container mounts it any more).
   */
  async releaseAll(o: ReleaseSandboxes): Promise<void> {
    const names = new Set(o.sandbox_ids);
    if (o.whole_session) {
      for (const c of await this.deps.runtime.list({ ...this.deps.scopeLabels, [SandboxLabels.session]: o.session_id })) names.add(c.name);
    }
    await Promise.all([...names].map((name) => this.release(name)));
    if (o.remove_workspace) await this.deps.files.removeWorkspace(o.session_id);
  }

  /** Stops and removes a container on purpose (terminate, delete, a bind the kernel refused, an expired lease). */
  async release(sandboxId: string): Promise<void> {
    this.releasing.add(sandboxId);
    try {
      this.deps.bound.forget(sandboxId);
      this.deps.files.released(sandboxId);
      await this.deps.provisioner.release(sandboxId, 2);
    } finally {
      // Docker's die/destroy events for it arrive within moments; after that the name is free again.
      setTimeout(() => this.releasing.delete(sandboxId), 10_000).unref();
    }
  }

  /** The kernel recorded the container lost: what was put in it is forgotten. */
  lost(sandboxId: string): void {
    this.deps.files.released(sandboxId);
  }

  /**
   * An engine that does not answer (restarting, briefly gone) is waited for, up to `engineWaitMs`,
   * before the turn fails `sandbox_start_failed`: a Docker restart should cost a turn a delay, not its answer.
   */
  private async start(o: AcquireSandbox): Promise<SandboxAcquired | SandboxAcquireFailed> {
    const { session_id: sessionId, generation } = o;
    let waited = 0;
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.startOnce(o);
      } catch (error) {
        const pause = Math.min(ENGINE_RETRY_MAX_MS, ENGINE_RETRY_MS * attempt);
        if (isUnreachable(error) && waited + pause <= (this.deps.engineWaitMs ?? ENGINE_WAIT_MS)) {
          this.deps.log.warn('the sandbox engine does not answer; the sandbox is started once it does', { session_id: sessionId, generation, attempt, err: error });
          await new Promise((r) => setTimeout(r, pause));
          waited += pause;
          continue;
        }
        const message = `the sandbox could not be started: ${error instanceof Error ? error.message : String(error)}`;
        this.deps.log.error(message, { session_id: sessionId, generation, err: error });
        return { kind: 'sandbox_acquire_failed', generation, message, now: this.deps.clock.now().toISOString() };
      }
    }
  }

  private async startOnce(o: AcquireSandbox): Promise<SandboxAcquired> {
    const { session_id: sessionId, generation, environment_id: environmentId } = o;
    const settings = await this.deps.settings.read(o.owner_id, environmentId);
    if (settings.sandbox.network === 'host' && !this.deps.allowHostNetwork) throw new Error(HOST_NETWORK_DISABLED);
    // An environment with packages runs on its own image, built once (the delivery stays in flight meanwhile).
    const config = await this.deps.images.sandboxFor(environmentId, settings);
    this.deps.pools.ensure(environmentId, config);
    const provisioned = await this.deps.acquisitions.run(sessionId, async () => {
      // A fork starts from its origin's snapshot: its workspace exists before the provisioner looks, so no warm spare is adopted.
      await this.deps.files.seedFork(o, config.workspaceBytes);
      const got = await this.deps.provisioner.acquire({ sessionId, generation, environmentId, config });
      await this.deps.files.prepare(o, got.sandbox.name);
      await this.deps.files.restoreImport(o, got.sandbox.name);
      return got;
    });
    if (settings.sandbox.warmPool.size > 0) this.deps.metrics.warmPoolClaims.inc({ result: provisioned.source === 'warm' ? 'hit' : 'miss' });
    this.deps.crash.reached('after-sandbox-start-before-bind');
    const now = this.deps.clock.now();
    const { idleTimeoutSeconds, maxLifetimeSeconds } = config.idle;
    return {
      kind: 'sandbox_acquired',
      generation,
      sandbox_id: provisioned.sandbox.name,
      warm: provisioned.source === 'warm',
      ...(provisioned.sandbox.host === undefined ? {} : { host: provisioned.sandbox.host }),
      expires_at: leaseExpiresAt({ lastActivityAt: now, startedAt: now, idle: config.idle }).toISOString(),
      lease: {
        idle_timeout_seconds: idleTimeoutSeconds,
        max_expires_at: maxLifetimeSeconds === null ? null : new Date(now.getTime() + maxLifetimeSeconds * 1000).toISOString(),
      },
      now: now.toISOString(),
    };
  }
}
