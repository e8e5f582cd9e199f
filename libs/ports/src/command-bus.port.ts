import type { CommandOutcome, SessionCommand } from '@berth/contracts';

/**
 * How a service hands a command to the kernel. `send` publishes to SESSION_CMD with
 * msgID = command_id (a retried send is deduplicated) and waits for the kernel's outcome up to
 * `timeoutMs`; a timeout rejects with a BerthError TIMEOUT (the command may still apply later).
 */
export interface CommandBus {
  send(command: SessionCommand, options?: { timeoutMs?: number }): Promise<CommandOutcome>;
  /** Publish without waiting for the outcome (facts reported by reactors). */
  dispatch(command: SessionCommand): Promise<void>;
}
