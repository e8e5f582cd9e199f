import type { Clock } from '@berth/core';
import type { BoundSandbox, SandboxBindings } from '@berth/sandbox-lifecycle';
import { leaseExpiresAt, type IdlePolicy } from '@berth/sandbox-domain';

type Tracked = { sessionId: string; generation: number; sandboxId: string; idle: IdlePolicy; startedAt: Date; lastActivityAt: Date };

/**
 * The sandboxes this manager bound or adopted (at start, and those the lease sweep takes over),
 * with their last activity: the lease sweep's view. A lease runs `idle_timeout` past the last turn
 * activity, capped by the lifetime.
 */
export class BoundSandboxes implements SandboxBindings {
  private readonly bySandbox = new Map<string, Tracked>();

  constructor(private readonly clock: Clock) {}

  /** `lastActivityAt`: now by default (a sandbox just bound). */
  track(input: { sessionId: string; generation: number; sandboxId: string; idle: IdlePolicy; startedAt: Date; lastActivityAt?: Date }): void {
    this.bySandbox.set(input.sandboxId, { ...input, lastActivityAt: input.lastActivityAt ?? this.clock.now() });
  }

  /** A turn ran or ended on the session's sandbox (at `at`, by default now): the lease starts over. */
  touch(sessionId: string, at: Date = this.clock.now()): void {
    for (const tracked of this.bySandbox.values()) if (tracked.sessionId === sessionId && at > tracked.lastActivityAt) tracked.lastActivityAt = at;
  }

  forget(sandboxId: string): void {
    this.bySandbox.delete(sandboxId);
  }

  forgetSession(sessionId: string): void {
    for (const [id, tracked] of this.bySandbox) if (tracked.sessionId === sessionId) this.bySandbox.delete(id);
  }

  find(sandboxId: string): BoundSandbox | null {
    const tracked = this.bySandbox.get(sandboxId);
    return tracked ? this.view(tracked) : null;
  }

  async listBound(): Promise<readonly BoundSandbox[]> {
    return [...this.bySandbox.values()].map((t) => this.view(t));
  }

  private view(t: Tracked): BoundSandbox {
    const expiresAt = leaseExpiresAt({ lastActivityAt: t.lastActivityAt, startedAt: t.startedAt, idle: t.idle }).toISOString();
    return { sessionId: t.sessionId, generation: t.generation, sandboxId: t.sandboxId, expiresAt };
  }
}
