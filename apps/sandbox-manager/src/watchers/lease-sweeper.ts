import type { Clock } from '@berth/core';
import type { Logger } from '@berth/ports';
import { sweepExpiredLeases, type BoundSandbox } from '@berth/sandbox-lifecycle';
import { managerCommands } from '@berth/sandbox-workflow';
import type { BoundSandboxes } from '../sandboxes/bound-sandboxes';
import type { SandboxService } from '../sandboxes/sandbox-service';
import type { TurnExecutions } from '../turns/turn-executions';
import type { SendManagerCommand } from '../workflow/manager-sender';

/**
 * Periodically reports sandboxes whose lease ran out (idle past the environment's timeout, or past
 * their lifetime) as `ReportSandboxExpired`, then stops them. A sandbox running a turn is busy,
 * not idle, and is left alone.
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
      bindings: { listBound: async () => (await this.deps.bound.listBound()).filter((b) => this.deps.turns.get(b.sessionId) === undefined) },
      clock: this.deps.clock,
      onExpired: (binding) => this.expire(binding),
      onError: (error, binding) => this.deps.log.error('lease expiry not reported', { sandbox_id: binding.sandboxId, err: error }),
    });
  }

  private async expire(binding: BoundSandbox): Promise<void> {
    await this.deps.send(managerCommands.sandboxExpired(binding.sessionId, { sandbox_id: binding.sandboxId, generation: binding.generation }));
    await this.deps.sandboxes.release(binding.sandboxId);
  }
}
