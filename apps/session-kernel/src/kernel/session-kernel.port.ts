import type { CommandOutcome, SessionCommand } from '@berth/contracts';

/** What this service needs from the kernel library: one command in, its outcome out. */
export type CommandExecutor = Readonly<{ execute(command: SessionCommand): Promise<CommandOutcome> }>;
