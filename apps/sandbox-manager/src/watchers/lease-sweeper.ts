import type { Clock } from '@berth/core';
import type { Logger, SessionJournal } from '@berth/ports';
import { sweepExpiredLeases, type BoundSandbox } from '@berth/sandbox-lifecycle';
import { managerCommands, type SessionView } from '@berth/sandbox-workflow';
import type { BoundSandboxes } from '../sandboxes/bound-sandboxes';
import type { SandboxService } from '../sandboxes/sandbox-service';
import type { TurnExecutions } from '../turns/turn-executions';
import type { SendManagerCommand } from '../workflow/manager-sender';

/**
 * Periodically reports sandboxes whose lease ran out (idle past the environment's timeout, or past
 * their lifetime) as `ReportSandboxExpired`, then stops them. A sandbox running a turn is busy,
 * not idle, and is left alone. Other managers may run the session's turns (they share the
 * consumers), so before a lease is called expired the journal is asked too: a turn open there is
 * busy, and the session's last event counts as activity.
 */
export class LeaseSweeper {
  private timer: NodeJS.Timeout | null = null;
  private sweeping: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly deps: Readonly<{
      bound: BoundSandboxes;
      turns: Pick<TurnExecutions, 'get'>;
      sandboxes: SandboxService;
      send: SendManagerCommand;
      journal: Pick<SessionJournal, 'readEvents'>;
      view: (sessionId: string) => Promise<SessionView>;
      clock: Clock;
      log: Logger;
    }>,
  ) {}

  start(everyMs: number): void {
    this.timer ??= setInterval(() => {
      this.sweeping = this.sweep();
    }, everyMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.sweeping;
  }

  sweep(): Promise<readonly BoundSandbox[]> {
    return sweepExpiredLeases({
      bindings: { listBound: () => this.idleHere() },
      clock: this.deps.clock,
      onExpired: (binding) => this.expire(binding),
      onError: (error, binding) => this.deps.log.error('lease expiry not reported', { sandbox_id: binding.sandboxId, err: error }),
    });
  }

  private async expire(binding: BoundSandbox): Promise<void> {
    await this.deps.send(managerCommands.sandboxExpired(binding.sessionId, { sandbox_id: binding.sandboxId, generation: binding.generation }));
    await this.deps.sandboxes.release(binding.sandboxId);
  }

  /**
   * The bound sandboxes no turn of this process runs in, each lease brought level with the journal
   * when it looks expired: a turn open there renews it now, the session's last event counts as
   * activity (another manager may have run its turns).
   */
  private async idleHere(): Promise<readonly BoundSandbox[]> {
    const now = this.deps.clock.now();
    const idle: BoundSandbox[] = [];
    for (const binding of await this.deps.bound.listBound()) {
      if (this.deps.turns.get(binding.sessionId) !== undefined) continue;
      if (binding.expiresAt === null || Date.parse(binding.expiresAt) > now.getTime()) {
        idle.push(binding);
        continue;
      }
      const view = await this.deps.view(binding.sessionId);
      const [last] = await this.deps.journal.readEvents(binding.sessionId, { order: 'desc', limit: 1 });
      if (view.turn !== null) this.deps.bound.touch(binding.sessionId, now);
      else if (last !== undefined) this.deps.bound.touch(binding.sessionId, new Date(last.occurred_at));
      idle.push(this.deps.bound.find(binding.sandboxId) ?? binding);
    }
    return idle;
  }
}
