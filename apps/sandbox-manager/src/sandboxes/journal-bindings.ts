import type { SandboxRuntime } from '@berth/ports';
import type { BoundSandbox, SandboxBindings, SandboxRequests } from '@berth/sandbox-lifecycle';
import { SandboxLabels, sandboxOwner, type SandboxRequest } from '@berth/sandbox-domain';
import type { SessionView } from '@berth/sandbox-workflow';

/**
 * Which of this manager's containers the kernel still binds (what a restarted manager adopts) or
 * is about to bind (what it leaves alone), read from each session's view (folded from the journal,
 * the truth) rather than from memory.
 */
export class JournalBindings implements SandboxBindings, SandboxRequests {
  constructor(
    private readonly runtime: SandboxRuntime,
    private readonly view: (sessionId: string) => Promise<SessionView>,
    private readonly scopeLabels: Readonly<Record<string, string>>,
  ) {}

  async listBound(): Promise<readonly BoundSandbox[]> {
    const bound: BoundSandbox[] = [];
    for (const sessionId of await this.sessionsWithContainers()) {
      const { sandbox } = await this.view(sessionId);
      if (sandbox !== null) bound.push({ sessionId, generation: sandbox.generation, sandboxId: sandbox.sandbox_id, expiresAt: sandbox.expires_at });
    }
    return bound;
  }

  async listRequested(): Promise<readonly SandboxRequest[]> {
    const requested: SandboxRequest[] = [];
    for (const sessionId of await this.sessionsWithContainers()) {
      const { sandbox_request: generation, lifecycle } = await this.view(sessionId);
      if (generation !== null && lifecycle === 'open') requested.push({ sessionId, generation });
    }
    return requested;
  }

  private async sessionsWithContainers(): Promise<ReadonlySet<string>> {
    const containers = await this.runtime.list({ ...this.scopeLabels, [SandboxLabels.managed]: 'true' });
    const sessions = new Set<string>();
    for (const c of containers) {
      const owner = sandboxOwner(c.name, c.labels);
      if (owner?.kind === 'session') sessions.add(owner.sessionId);
    }
    return sessions;
  }
}
