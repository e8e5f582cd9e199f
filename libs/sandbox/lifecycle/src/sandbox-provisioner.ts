import type { SandboxInfo, SandboxRuntime, SessionWorkspaces } from '@berth/ports';
import { type SandboxConfig, SandboxLabels, sessionSandboxName, sessionSandboxSpec } from '@berth/sandbox-domain';
import type { WarmPool } from './warm-pool';

export type Provisioned = Readonly<{ sandbox: SandboxInfo; source: 'existing' | 'warm' | 'cold'; workspaceId: string }>;

/**
 * Gets a session its sandbox for a generation, idempotently: the container already running under
 * the session's deterministic name (a retried request, or one adopted after a restart) wins, then
 * a warm-pool claim, then a cold start. A retry can therefore never create a second container.
 *
 * Every sandbox of a session mounts the session's workspace. A session without one yet may claim a
 * warm container and adopt the spare workspace it was started with (the claim stays a rename); a
 * session that already has one (a rebuild) starts cold with it, since mounts cannot be added to a
 * running container.
 */
export class SandboxProvisioner {
  constructor(private readonly deps: { runtime: SandboxRuntime; workspaces: SessionWorkspaces; pool?: WarmPool; scopeLabels?: Readonly<Record<string, string>> }) {}

  async acquire(input: { sessionId: string; generation: number; environmentId: string; config: SandboxConfig }): Promise<Provisioned> {
    const name = sessionSandboxName(input.sessionId, input.generation);
    const existing = await this.deps.runtime.inspect(name);
    if (existing?.running && (await this.owns(input.sessionId, existing))) return { sandbox: existing, source: 'existing', workspaceId: workspaceOf(existing) };
    const owned = await this.deps.workspaces.ofSession(input.sessionId);
    if (existing === null && owned === null && this.deps.pool) {
      const warm = await this.deps.pool.claim(input);
      if (warm && (await this.owns(input.sessionId, warm))) return { sandbox: warm, source: 'warm', workspaceId: workspaceOf(warm) };
      if (warm) await this.release(warm.name);
    }
    const workspace = owned ?? (await this.deps.workspaces.forSession(input.sessionId, input.config.workspaceBytes));
    const spec = sessionSandboxSpec({ ...input, workspace });
    const sandbox = await this.deps.runtime.ensureRunning({ ...spec, labels: { ...spec.labels, ...this.deps.scopeLabels } });
    return { sandbox, source: 'cold', workspaceId: workspace.id };
  }

  /** Stops and removes a session's sandbox (terminate, delete, rebuild); missing is fine. */
  async release(sandboxId: string, stopTimeoutSeconds = 5): Promise<void> {
    await this.deps.runtime.stop(sandboxId, stopTimeoutSeconds);
    await this.deps.runtime.remove(sandboxId);
  }

  /** The container mounts the session's workspace: adopting its spare if the session has none yet. */
  private async owns(sessionId: string, sandbox: SandboxInfo): Promise<boolean> {
    const workspace = sandbox.labels[SandboxLabels.workspace];
    return workspace !== undefined && (await this.deps.workspaces.adopt(sessionId, workspace));
  }
}

const workspaceOf = (sandbox: SandboxInfo): string => sandbox.labels[SandboxLabels.workspace] as string;
