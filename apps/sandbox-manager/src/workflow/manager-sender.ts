import type { CommandOutcome, SessionCommand } from '@berth/contracts';
import type { Clock } from '@berth/core';
import type { CommandBus, Logger } from '@berth/ports';
import type { ManagerCommand } from '@berth/sandbox-workflow';
import { sendReliably } from './send-reliably';

export const MANAGER_ACTOR = 'sandbox-manager';

/** Sends a manager command and waits for the kernel's outcome (retrying the same id while the broker or kernel is away). */
export type SendManagerCommand = (command: ManagerCommand) => Promise<CommandOutcome>;

/** The one place a manager command gets its envelope: who sent it and when. */
export function managerSender(bus: CommandBus, clock: Clock, log: Logger): SendManagerCommand {
  return (command) =>
    sendReliably(
      bus,
      { type: command.type, data: command.data, meta: { command_id: command.command_id, session_id: command.session_id, actor: MANAGER_ACTOR, issued_at: clock.now().toISOString() } } as SessionCommand,
      log,
    );
}
