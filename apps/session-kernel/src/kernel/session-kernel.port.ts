import type { ExecutedCommand } from '@berth/session-kernel';
import type { SessionCommand } from '@berth/contracts';

/** What this service needs from the kernel library: one command in, its outcome and new events out. */
export type CommandExecutor = Readonly<{ executeWithEvents(command: SessionCommand): Promise<ExecutedCommand> }>;
