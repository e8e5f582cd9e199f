import type { CommandOutcome, SessionCommand } from '@berth/contracts';
import type { CommandBus } from '@berth/ports';

export type ManagerLog = Readonly<{ log(message: string): void; warn(message: string): void; error(message: string): void }>;

const ATTEMPTS = 5;

/**
 * Sends a fact to the kernel and waits for its outcome, retrying transport failures (broker
 * away, kernel slow) with the same command id, which the kernel applies once. A refusal is
 * logged, not retried: the kernel has decided.
 */
export async function sendReliably(bus: CommandBus, command: SessionCommand, log: ManagerLog, timeoutMs = 10_000): Promise<CommandOutcome> {
  for (let attempt = 1; ; attempt++) {
    try {
      const outcome = await bus.send(command, { timeoutMs });
      if (!outcome.ok) log.warn(`${command.type} for ${command.meta.session_id} refused: ${outcome.error.code} ${outcome.error.message}`);
      return outcome;
    } catch (error) {
      if (attempt >= ATTEMPTS) throw error;
      log.warn(`${command.type} for ${command.meta.session_id} not delivered (attempt ${attempt}): ${error instanceof Error ? error.message : String(error)}`);
      await new Promise((resolve) => setTimeout(resolve, 200 * 2 ** attempt));
    }
  }
}
