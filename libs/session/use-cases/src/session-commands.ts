import { BerthError, ErrorCodes, berthErrorFrom, isBerthError, type Clock, type IdGenerator } from '@berth/core';
import type { CommandData, CommandOutcome, CommandType, SessionCommand } from '@berth/contracts';
import type { CommandBus } from '@berth/ports';

export type AcceptedOutcome = Extract<CommandOutcome, { ok: true }>;

/** What the use cases need to send a command and get the kernel's outcome (refusals thrown as coded errors). */
export interface SessionCommandSender {
  send<T extends CommandType>(actor: string, sessionId: string, type: T, data: CommandData<T>, commandId?: string): Promise<AcceptedOutcome>;
}

const timeout = (ms: number) => new BerthError(ErrorCodes.TIMEOUT, 504, `the session kernel did not answer within ${ms} ms; the command may still apply`);

/**
 * Sends one session command on behalf of the caller and waits, bounded, for the kernel's outcome.
 * A refusal comes back as the kernel's coded error (its status and code); no answer is 504 TIMEOUT.
 */
export class SessionCommands implements SessionCommandSender {
  constructor(
    private readonly bus: CommandBus,
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
    private readonly timeoutMs: number,
  ) {}

  async send<T extends CommandType>(actor: string, sessionId: string, type: T, data: CommandData<T>, commandId?: string): Promise<AcceptedOutcome> {
    const command = {
      type,
      data,
      meta: { command_id: commandId ?? this.ids.next('cmd'), session_id: sessionId, actor, issued_at: this.clock.now().toISOString() },
    } as SessionCommand;
    const outcome = await this.withDeadline(this.bus.send(command, { timeoutMs: this.timeoutMs }));
    if (!outcome.ok) throw berthErrorFrom(outcome.error);
    return outcome;
  }

  private async withDeadline<T>(work: Promise<T>): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      // A little past the bus's own timeout, for buses that never give up by themselves.
      timer = setTimeout(() => reject(timeout(this.timeoutMs)), this.timeoutMs + 250);
    });
    try {
      return await Promise.race([work, deadline]);
    } catch (error) {
      if (isBerthError(error)) throw error;
      throw new BerthError(ErrorCodes.UNAVAILABLE, 503, 'the session kernel could not be reached');
    } finally {
      clearTimeout(timer);
    }
  }
}
