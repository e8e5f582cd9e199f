import type { PoolEnvironment, WarmPool } from '@berth/sandbox-lifecycle';
import type { SandboxConfig } from '@berth/sandbox-domain';

/**
 * Which environments keep a warm pool: learned from the environments sessions use (an
 * environment asks for one with `config.warm_pool.size`). A new or resized pool refills in the
 * background; the next session of that environment claims from it.
 */
export class WarmPools {
  private readonly environments = new Map<string, SandboxConfig>();

  constructor(readonly pool: WarmPool) {}

  ensure(environmentId: string, config: SandboxConfig): void {
    const known = this.environments.get(environmentId);
    if (known !== undefined && JSON.stringify(known) === JSON.stringify(config)) return;
    if (config.warmPool.size === 0 && known === undefined) return;
    this.environments.set(environmentId, config);
    const configured: PoolEnvironment[] = [...this.environments].map(([id, c]) => ({ environmentId: id, config: c }));
    this.pool.configure(configured);
    this.pool.refill(environmentId);
  }
}
