import type { Clock } from '@berth/core';
import type { CommandBus, Logger } from '@berth/ports';
import { sweepExpiredLeases, type BoundSandbox } from '@berth/sandbox-lifecycle';
import type { BoundSandboxes } from '../sandboxes/bound-sandboxes';
import type { SandboxService } from '../sandboxes/sandbox-service';
import type { ManagerCommands } from '../sessions/manager-commands';
import { sendReliably } from '../sessions/send-reliably';
import type { RunningTurns } from '../turns/running-turns';

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
      running: RunningTurns;
      sandboxes: SandboxService;
      bus: CommandBus;
      commands: ManagerCommands;
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
      bindings: { listBound: async () => (await this.deps.bound.listBound()).filter((b) => this.deps.running.get(b.sessionId) === undefined) },
      clock: this.deps.clock,
      onExpired: (binding) => this.expire(binding),
      onError: (error, binding) => this.deps.log.error('lease expiry not reported', { sandbox_id: binding.sandboxId, err: error }),
    });
  }

  private async expire(binding: BoundSandbox): Promise<void> {
    const command = this.deps.commands.make('ReportSandboxExpired', binding.sessionId, `expired_${binding.sessionId}_g${binding.generation}`, {
      sandbox_id: binding.sandboxId,
      generation: binding.generation,
    });
    await sendReliably(this.deps.bus, command, this.deps.log);
    await this.deps.sandboxes.release(binding.sandboxId);
  }
}
