import type { SandboxRuntime } from '@berth/ports';
import type { BoundSandbox, SandboxBindings } from '@berth/sandbox-lifecycle';
import { SandboxLabels, sandboxOwner } from '@berth/sandbox-domain';
import type { SessionFactsReader } from '../sessions/session-facts';

/**
 * Which of this manager's containers the kernel still binds, read from each session's journal
 * (the truth) rather than from memory: what a restarted manager adopts.
 */
export class JournalBindings implements SandboxBindings {
  constructor(
    private readonly runtime: SandboxRuntime,
    private readonly facts: SessionFactsReader,
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
      const { state } = await this.facts.load(sessionId);
      if (state.sandbox !== null && !state.runtime_unavailable) {
        bound.push({ sessionId, generation: state.sandbox.generation, sandboxId: state.sandbox.sandbox_id, expiresAt: state.sandbox.expires_at });
      }
    }
    return bound;
  }
}
