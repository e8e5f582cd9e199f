import type { Logger, SandboxRuntime } from '@berth/ports';
import { watchSandboxDeaths, type SandboxDeath, type WarmPool } from '@berth/sandbox-lifecycle';
import { managerCommands } from '@berth/sandbox-workflow';
import type { SandboxService } from '../sandboxes/sandbox-service';
import type { SendManagerCommand } from '../workflow/manager-sender';

const CAUSE = { exited: 'die', oom_killed: 'oom', removed: 'destroy', host_lost: 'host_lost' } as const;

/**
 * Docker's `die` / `oom` / `destroy` of a session's container becomes `ReportSandboxDied` at once
 * (the kernel fences it by sandbox id and generation; a turn that sees its container die sends the same command). Containers the manager stops on purpose
 * are not deaths. Runs until `signal` aborts; a broken event stream is reopened.
 */
export class DeathReporter {
  constructor(
    private readonly deps: Readonly<{
      runtime: SandboxRuntime;
      sandboxes: SandboxService;
      send: SendManagerCommand;
      pool: WarmPool;
      log: Logger;
      scopeLabels: Readonly<Record<string, string>>;
    }>,
  ) {}

  async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      try {
        await watchSandboxDeaths({
          runtime: this.deps.runtime,
          signal,
          pool: this.deps.pool,
          scopeLabels: this.deps.scopeLabels,
          onDeath: (death) => this.report(death),
          onError: (error) => this.deps.log.error('reporting a sandbox death failed', { err: error }),
        });
      } catch (error) {
        if (signal.aborted) return;
        this.deps.log.warn('docker event stream broke, reopening', { err: error });
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
    }
  }

  async report(death: SandboxDeath): Promise<void> {
    if (this.deps.sandboxes.isReleasing(death.sandboxId)) return;
    this.deps.log.info(`sandbox ${death.reason}`, { session_id: death.sessionId, sandbox_id: death.sandboxId, reason: death.reason });
    await this.deps.send(
      managerCommands.sandboxDied(death.sessionId, { sandbox_id: death.sandboxId, generation: death.generation, cause: CAUSE[death.reason], exit_code: death.exitCode }),
    );
  }
}
