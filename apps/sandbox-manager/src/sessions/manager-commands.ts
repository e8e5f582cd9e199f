import type { CommandData, CommandType, SessionCommand } from '@berth/contracts';
import type { Clock } from '@berth/core';

export const MANAGER_ACTOR = 'sandbox-manager';

/**
 * Builds the facts the manager reports. Command ids are derived from what the fact is about
 * (session, generation, turn, offset), so a retried report after a crash or a redelivery is the
 * same command and the kernel applies it once.
 */
export class ManagerCommands {
  constructor(private readonly clock: Clock) {}

  make<T extends CommandType>(type: T, sessionId: string, key: string, data: CommandData<T>): SessionCommand {
    const command_id = `cmd_sm_${key}`.slice(0, 128);
    return { type, data, meta: { command_id, session_id: sessionId, actor: MANAGER_ACTOR, issued_at: this.clock.now().toISOString() } } as SessionCommand;
  }
}
