import type { SandboxRuntime } from '@berth/ports';
import type { BoundSandbox, SandboxBindings } from '@berth/sandbox-lifecycle';
import { SandboxLabels, sandboxOwner } from '@berth/sandbox-domain';
import type { SessionView } from '@berth/sandbox-workflow';

/**
 * Which of this manager's containers the kernel still binds, read from each session's view (folded
 * from the journal, the truth) rather than from memory: what a restarted manager adopts.
 */
export class JournalBindings implements SandboxBindings {
  constructor(
    private readonly runtime: SandboxRuntime,
    private readonly view: (sessionId: string) => Promise<SessionView>,
    private readonly scopeLabels: Readonly<Record<string, string>>,
  ) {}

  async listBound(): Promise<readonly BoundSandbox[]> {
    const containers = await this.runtime.list({ ...this.scopeLabels, [SandboxLabels.managed]: 'true' });
    const sessions = new Set<string>();
    for (const c of containers) {
      const owner = sandboxOwner(c.name, c.labels);
      if (owner?.kind === 'session') sessions.add(owner.sessionId);
    }
    const bound: BoundSandbox[] = [];
    for (const sessionId of sessions) {
      const { sandbox } = await this.view(sessionId);
      if (sandbox !== null) bound.push({ sessionId, generation: sandbox.generation, sandboxId: sandbox.sandbox_id, expiresAt: sandbox.expires_at });
    }
    return bound;
  }
}
