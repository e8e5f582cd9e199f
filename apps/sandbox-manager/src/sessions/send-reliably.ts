import type { CommandOutcome, SessionCommand } from '@berth/contracts';
import type { CommandBus, Logger } from '@berth/ports';

const ATTEMPTS = 5;

/**
 * Sends a fact to the kernel and waits for its outcome, retrying transport failures (broker
 * away, kernel slow) with the same command id, which the kernel applies once. A refusal is
 * logged, not retried: the kernel has decided.
 */
export async function sendReliably(bus: CommandBus, command: SessionCommand, log: Logger, timeoutMs = 10_000): Promise<CommandOutcome> {
  for (let attempt = 1; ; attempt++) {
    try {
      const outcome = await bus.send(command, { timeoutMs });
      if (!outcome.ok) log.warn(`${command.type} refused`, { ...about(command), code: outcome.error.code, reason: outcome.error.message });
      return outcome;
    } catch (error) {
      if (attempt >= ATTEMPTS) throw error;
      log.warn(`${command.type} not delivered, retrying`, { ...about(command), attempt, err: error });
      await new Promise((resolve) => setTimeout(resolve, 200 * 2 ** attempt));
    }
  }
}

const about = (command: SessionCommand) => ({ session_id: command.meta.session_id, command_id: command.meta.command_id });
