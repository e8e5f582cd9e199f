import type { SandboxInfo, SandboxRuntime } from '@berth/ports';
import { type SandboxConfig, sessionSandboxName, sessionSandboxSpec } from '@berth/sandbox-domain';
import type { WarmPool } from './warm-pool';

export type Provisioned = Readonly<{ sandbox: SandboxInfo; source: 'existing' | 'warm' | 'cold' }>;

/**
 * Gets a session its sandbox for a generation, idempotently: the container already running under
 * the session's deterministic name (a retried request, or one adopted after a restart) wins, then
 * a warm-pool claim, then a cold start. A retry can therefore never create a second container.
 */
export class SandboxProvisioner {
  constructor(private readonly deps: { runtime: SandboxRuntime; pool?: WarmPool; scopeLabels?: Readonly<Record<string, string>> }) {}

  async acquire(input: { sessionId: string; generation: number; environmentId: string; config: SandboxConfig }): Promise<Provisioned> {
    const name = sessionSandboxName(input.sessionId, input.generation);
    const existing = await this.deps.runtime.inspect(name);
    if (existing?.running) return { sandbox: existing, source: 'existing' };
    if (existing === null && this.deps.pool) {
      const warm = await this.deps.pool.claim(input);
      if (warm) return { sandbox: warm, source: 'warm' };
    }
    const spec = sessionSandboxSpec(input);
    return { sandbox: await this.deps.runtime.ensureRunning({ ...spec, labels: { ...spec.labels, ...this.deps.scopeLabels } }), source: 'cold' };
  }

  /** Stops and removes a session's sandbox (terminate, delete, rebuild); missing is fine. */
  async release(sandboxId: string, stopTimeoutSeconds = 5): Promise<void> {
    await this.deps.runtime.stop(sandboxId, stopTimeoutSeconds);
    await this.deps.runtime.remove(sandboxId);
  }
}
