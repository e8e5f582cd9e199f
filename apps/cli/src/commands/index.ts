import { agentCommands } from './agents';
import type { Command } from './command';
import { doctorCommands } from './doctor';
import { envCommands } from './envs';
import { fileCommands } from './files';
import { keyCommands } from './keys';
import { natsCredentialCommands } from './nats-credentials';
import { replayCommands } from './replay';
import { sessionCommands } from './sessions';
import { storeCommands } from './store';
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
  ...natsCredentialCommands,
  ...webhookCommands,
  ...vaultCommands,
  ...doctorCommands,
  ...replayCommands,
  ...storeCommands,
];
