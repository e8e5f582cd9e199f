import type { CommandOutcome, SessionCommand } from '@berth/contracts';
import type { CommandBus, LogFields, Logger } from '@berth/ports';

const ATTEMPTS = 5;

/**
 * Runs `attempt` until it resolves, up to 5 times with a doubling wait (0.4 s … 3.2 s): what the
 * manager does when the broker, the kernel or the store is briefly away. The last failure is thrown.
 */
export async function withRetries<T>(what: string, attempt: () => Promise<T>, log: Logger, fields: LogFields = {}): Promise<T> {
  for (let n = 1; ; n++) {
    try {
      return await attempt();
    } catch (error) {
      if (n >= ATTEMPTS) throw error;
      log.warn(`${what} failed, retrying`, { ...fields, attempt: n, err: error });
      await new Promise((resolve) => setTimeout(resolve, 200 * 2 ** n));
    }
  }
}

/**
 * Sends a fact to the kernel and waits for its outcome, retrying transport failures (broker
 * away, kernel slow) with the same command id, which the kernel applies once. A refusal is
 * logged, not retried: the kernel has decided.
 */
export async function sendReliably(bus: CommandBus, command: SessionCommand, log: Logger, timeoutMs = 10_000): Promise<CommandOutcome> {
  const about = { session_id: command.meta.session_id, command_id: command.meta.command_id };
  const outcome = await withRetries(`${command.type} delivery`, () => bus.send(command, { timeoutMs }), log, about);
  if (!outcome.ok) log.warn(`${command.type} refused`, { ...about, code: outcome.error.code, reason: outcome.error.message });
  return outcome;
}
