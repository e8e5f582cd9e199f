import { agentCommands } from './agents';
import type { Command } from './command';
import { doctorCommands } from './doctor';
import { envCommands } from './envs';
import { fileCommands } from './files';
import { keyCommands } from './keys';
import { replayCommands } from './replay';
import { sessionCommands } from './sessions';
import { streamCommands } from './stream';
import { vaultCommands } from './vaults';
import { webhookCommands } from './webhooks';
import { workspaceCommands } from './workspace';

export const COMMANDS: readonly Command[] = [
  ...agentCommands,
  ...envCommands,
  ...sessionCommands,
  ...fileCommands,
  ...workspaceCommands,
  ...streamCommands,
  ...keyCommands,
  ...webhookCommands,
  ...vaultCommands,
  ...doctorCommands,
  ...replayCommands,
];
