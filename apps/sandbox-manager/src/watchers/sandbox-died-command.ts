import type { CommandData, SessionCommand } from '@berth/contracts';
import type { ManagerCommands } from '../sessions/manager-commands';

/**
 * `ReportSandboxDied` for one container generation. Its command id names only the session and
 * generation, so the death watcher's report and the turn runner's (whichever sees the death
 * first) are one command to the kernel.
 */
export function sandboxDiedCommand(
  commands: ManagerCommands,
  death: Readonly<{ sessionId: string; sandboxId: string; generation: number; cause: CommandData<'ReportSandboxDied'>['cause']; exitCode: number | null }>,
): SessionCommand {
  return commands.make('ReportSandboxDied', death.sessionId, `died_${death.sessionId}_g${death.generation}`, {
    sandbox_id: death.sandboxId,
    generation: death.generation,
    cause: death.cause,
    exit_code: death.exitCode,
  });
}
