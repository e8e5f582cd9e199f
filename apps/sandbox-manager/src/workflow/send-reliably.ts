import type { CommandOutcome, SessionCommand } from '@berth/contracts';
import type { CommandBus } from '@berth/ports';

export type ManagerLog = Readonly<{ log(message: string): void; warn(message: string): void; error(message: string): void }>;

const ATTEMPTS = 5;

/**
 * Runs `attempt` until it resolves, up to 5 times with a doubling wait (0.4 s … 3.2 s): what the
 * manager does when the broker, the kernel or the store is briefly away. The last failure is thrown.
 */
export async function withRetries<T>(what: string, attempt: () => Promise<T>, log: ManagerLog): Promise<T> {
  for (let n = 1; ; n++) {
    try {
      return await attempt();
    } catch (error) {
      if (n >= ATTEMPTS) throw error;
      log.warn(`${what} failed (attempt ${n}): ${error instanceof Error ? error.message : String(error)}`);
      await new Promise((resolve) => setTimeout(resolve, 200 * 2 ** n));
    }
  }
}

/**
 * Sends a fact to the kernel and waits for its outcome, retrying transport failures (broker
 * away, kernel slow) with the same command id, which the kernel applies once. A refusal is
 * logged, not retried: the kernel has decided.
 */
export async function sendReliably(bus: CommandBus, command: SessionCommand, log: ManagerLog, timeoutMs = 10_000): Promise<CommandOutcome> {
  const outcome = await withRetries(`${command.type} for ${command.meta.session_id}`, () => bus.send(command, { timeoutMs }), log);
  if (!outcome.ok) log.warn(`${command.type} for ${command.meta.session_id} refused: ${outcome.error.code} ${outcome.error.message}`);
  return outcome;
}
