import type { Clock } from '@berth/core';
import type { SandboxClaims, SandboxInfo, SandboxRuntime, SessionWorkspaces } from '@berth/ports';
import {
  isWarmExpired,
  poolSandboxSpec,
  refillCount,
  type SandboxConfig,
  sandboxConfigFingerprint,
  SandboxLabels,
  sandboxOwner,
  sessionSandboxName,
  type StartupPlan,
} from '@berth/sandbox-domain';

export type PoolEnvironment = Readonly<{ environmentId: string; config: SandboxConfig }>;

type Warm = Readonly<{ id: string; name: string; labels: Readonly<Record<string, string>>; startedAt: string | null }>;

export type WarmPoolDeps = Readonly<{
  runtime: SandboxRuntime;
  /** Each warm container starts with a spare workspace, which the session that claims it adopts. */
  workspaces: SessionWorkspaces;
  /**
   * Who claimed which warm container, shared by every sandbox-manager on the engine (the store's):
   * Docker cannot be the ledger, since its rename looks the container up by the old name *before*
   * taking the container lock, so two racing renames of one pool container to two session names
   * can both succeed.
   */
  claims: SandboxClaims;
  clock: Clock;
  /** Draws a slot token for a new pool container name (lowercase letters and digits). */
  nextSlot: () => string;
  onError?: (error: unknown, context: string) => void;
  /** Labels added to every pool container, e.g. an installation id when several share one engine. */
  scopeLabels?: Readonly<Record<string, string>>;
}>;

/**
 * Per-environment pools of started, unclaimed sandboxes, shared by every sandbox-manager on the
 * engine: each knows the containers it started or adopted, and looks up the others' (`discover`)
 * at each sweep and before it gives up on a claim. A claim takes the oldest fresh one out of the
 * in-process list (synchronously: one claimer per process), wins it in the store's claims (one
 * claimer across processes), then renames it to the session's deterministic name — the rename
 * fails if the session already has a container, so a session never gets two either. A container
 * is removed only by whoever wins its claim too, so no manager removes one another just handed
 * out. Claims trigger a background refill; `sweep` drops containers past their TTL.
 */
export class WarmPool {
  private readonly environments = new Map<string, SandboxConfig>();
  private readonly ready = new Map<string, Map<string, Warm>>();
  private readonly starting = new Map<string, number>();
  private readonly inFlight = new Set<Promise<unknown>>();

  constructor(private readonly deps: WarmPoolDeps) {
    if (!deps.runtime.relabel) throw new Error('a warm pool needs a runtime that can rename containers (relabel)');
  }

  /**
   * Sets the pools to keep (an environment absent here or with size 0 keeps none). Ready
   * containers started for another config of their environment are removed at once.
   */
  configure(environments: readonly PoolEnvironment[]): void {
    this.environments.clear();
    for (const e of environments) this.environments.set(e.environmentId, e.config);
    for (const [environmentId, pool] of this.ready) {
      const config = this.environments.get(environmentId);
      if (!config) continue;
      for (const warm of [...pool.values()]) {
        if (!this.fits(warm, config)) {
          pool.delete(warm.id);
          this.background(this.discard(warm), 'remove outdated warm sandbox');
        }
      }
    }
  }

  targets(): readonly { environmentId: string; size: number; ttlSeconds: number; fingerprint: string }[] {
    return [...this.environments].map(([environmentId, c]) => ({
      environmentId,
      size: c.warmPool.size,
      ttlSeconds: c.warmPool.ttlSeconds,
      fingerprint: sandboxConfigFingerprint(c),
    }));
  }

  /** Takes over warm containers found at start (see `planStartup`). */
  adopt(warm: StartupPlan['warm']): void {
    for (const { sandbox, environmentId } of warm) this.readyOf(environmentId).set(sandbox.id, sandbox);
  }

  readyCount(environmentId: string): number {
    return this.ready.get(environmentId)?.size ?? 0;
  }

  /** A warm container that died or was removed is no longer offered. */
  forget(containerId: string): void {
    for (const pool of this.ready.values()) pool.delete(containerId);
  }

  /** The claimed sandbox, renamed for the session; null when none is ready (start one cold). */
  async claim(input: { environmentId: string; sessionId: string; generation: number }): Promise<SandboxInfo | null> {
    const config = this.environments.get(input.environmentId);
    if (!config) return null;
    const pool = this.readyOf(input.environmentId);
    const name = sessionSandboxName(input.sessionId, input.generation);
    try {
      if (pool.size === 0) await this.discover(input.environmentId);
      for (let warm = this.takeOldest(pool); warm !== null; warm = this.takeOldest(pool)) {
        if (isWarmExpired(warm.startedAt, config.warmPool.ttlSeconds, this.deps.clock.now()) || !this.fits(warm, config)) {
          this.background(this.discard(warm), 'reap expired or outdated warm sandbox');
          continue;
        }
        if (!(await this.deps.claims.claim(warm.id, input.sessionId, this.deps.clock.now().toISOString()))) continue;
        const claimed = await this.handOver(warm, name);
        if (claimed === 'name-taken') {
          pool.set(warm.id, warm);
          return null;
        }
        if (claimed !== null) return claimed;
      }
      return null;
    } finally {
      this.refill(input.environmentId);
    }
  }

  private async handOver(warm: Warm, name: string): Promise<SandboxInfo | null | 'name-taken'> {
    // The liveness check runs beside the rename (the rename is the slow part of a claim).
    const [renamed, state] = await Promise.allSettled([this.deps.runtime.relabel?.(warm.id, name), this.deps.runtime.inspect(warm.id)]);
    const info = state.status === 'fulfilled' ? state.value : null;
    if (renamed.status === 'rejected') {
      // Either the session already has a container by that name, or the warm one is gone.
      await this.deps.claims.release(warm.id);
      return info?.running ? 'name-taken' : null;
    }
    if (info?.running) return { ...info, name };
    this.background(this.discard(warm, true), 'remove dead claimed sandbox');
    return null;
  }

  /**
   * Takes into this manager's list the running, unclaimed pool containers of `environmentId` (all
   * configured environments by default) that another manager started, and drops those gone or
   * claimed since.
   */
  async discover(environmentId?: string): Promise<void> {
    const ids = environmentId !== undefined ? [environmentId] : [...this.environments.keys()];
    await Promise.all(
      ids.map(async (id) => {
        const config = this.environments.get(id);
        if (!config || config.warmPool.size === 0) return;
        const live = await this.deps.runtime.list({ ...this.deps.scopeLabels, [SandboxLabels.managed]: 'true', [SandboxLabels.pool]: id });
        const unclaimed = live.filter((c) => c.running && sandboxOwner(c.name, c.labels)?.kind === 'pool' && this.fits(c, config));
        const pool = this.readyOf(id);
        const seen = new Set(unclaimed.map((c) => c.id));
        for (const known of [...pool.keys()]) if (!seen.has(known)) pool.delete(known);
        for (const c of unclaimed) if (!pool.has(c.id)) pool.set(c.id, c);
      }),
    );
  }

  /** Starts containers until ready + starting reaches each target; returns at once. */
  refill(environmentId?: string): void {
    const ids = environmentId ? [environmentId] : [...this.environments.keys()];
    for (const id of ids) {
      const config = this.environments.get(id);
      if (!config) continue;
      const missing = refillCount(config.warmPool.size, this.readyCount(id), this.starting.get(id) ?? 0);
      for (let i = 0; i < missing; i++) this.background(this.startOne(id, config), `refill pool ${id}`);
    }
  }

  /** Looks up the other managers' warm containers, removes those past their TTL and from pools no longer configured; then refills. */
  async sweep(): Promise<void> {
    await this.discover();
    const now = this.deps.clock.now();
    const removals: Promise<boolean>[] = [];
    for (const [environmentId, pool] of this.ready) {
      const config = this.environments.get(environmentId);
      for (const warm of [...pool.values()]) {
        if (!config || config.warmPool.size === 0 || isWarmExpired(warm.startedAt, config.warmPool.ttlSeconds, now)) {
          pool.delete(warm.id);
          removals.push(this.discard(warm));
        }
      }
    }
    await Promise.all(removals);
    this.refill();
  }

  /** Resolves when no refill or removal is running (tests, benchmarks, shutdown). */
  async idle(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }

  private async startOne(environmentId: string, config: SandboxConfig): Promise<void> {
    this.starting.set(environmentId, (this.starting.get(environmentId) ?? 0) + 1);
    try {
      const workspace = await this.deps.workspaces.createSpare(config.workspaceBytes);
      const spec = poolSandboxSpec({ environmentId, slot: this.deps.nextSlot(), config, workspace });
      const info = await this.deps.runtime.ensureRunning({ ...spec, labels: { ...spec.labels, ...this.deps.scopeLabels } }).catch(async (error: unknown) => {
        await this.deps.workspaces.removeSpare(workspace.id);
        throw error;
      });
      if (this.environments.has(environmentId)) this.readyOf(environmentId).set(info.id, info);
      else await this.discard(info);
    } finally {
      this.starting.set(environmentId, (this.starting.get(environmentId) ?? 1) - 1);
    }
  }

  /** Removes a pool container found on the engine (start-up reconcile) if its claim is won; false when another manager holds it. */
  async discardFound(sandbox: Pick<Warm, 'id' | 'labels'>): Promise<boolean> {
    this.forget(sandbox.id);
    return this.discard(sandbox);
  }

  /**
   * Removes a warm container no session got, and its spare workspace: only after winning its claim
   * (unless this manager holds it already), so a container another manager just claimed stays.
   */
  private async discard(warm: Pick<Warm, 'id' | 'labels'>, claimed = false): Promise<boolean> {
    if (!claimed && !(await this.deps.claims.claim(warm.id, `reap:${warm.id}`, this.deps.clock.now().toISOString()))) return false;
    await this.deps.runtime.remove(warm.id);
    await this.deps.claims.release(warm.id);
    const spare = warm.labels[SandboxLabels.workspace];
    if (spare !== undefined) await this.deps.workspaces.removeSpare(spare);
    return true;
  }

  private fits(warm: Pick<Warm, 'labels'>, config: SandboxConfig): boolean {
    return warm.labels[SandboxLabels.poolSpec] === sandboxConfigFingerprint(config);
  }

  private takeOldest(pool: Map<string, Warm>): Warm | null {
    let oldest: Warm | null = null;
    for (const warm of pool.values()) {
      if (oldest === null || Date.parse(warm.startedAt ?? '') < Date.parse(oldest.startedAt ?? '')) oldest = warm;
    }
    if (oldest) pool.delete(oldest.id);
    return oldest;
  }

  private readyOf(environmentId: string): Map<string, Warm> {
    let pool = this.ready.get(environmentId);
    if (!pool) this.ready.set(environmentId, (pool = new Map()));
    return pool;
  }

  private background(work: Promise<unknown>, context: string): void {
    const tracked = work.catch((error: unknown) => this.deps.onError?.(error, context));
    this.inFlight.add(tracked);
    void tracked.finally(() => this.inFlight.delete(tracked));
  }
}
