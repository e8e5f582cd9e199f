import type { AgentConfig, HarnessKind, PermissionMode, TurnFailureReason } from '@berth/contracts';
import type { ModelSettings } from '../sandboxes/environment-settings';

/** One turn to run, with everything read from the journal and the environment beforehand. */
export type TurnAssignment = Readonly<{
  sessionId: string;
  turnId: string;
  /** The sandbox generation the turn runs on (its outputs are fenced by it). */
  generation: number;
  /** The bound container's name. */
  sandboxId: string;
  harness: HarnessKind;
  /** Whether some tool of the pinned agent asks (the session's `permission_mode`): the harness output is parsed accordingly. */
  permissionMode: PermissionMode;
  /** The agent version the session pinned at create. */
  agent: AgentConfig;
  prompt: string;
  /** The harness's own conversation id from the previous turn; null on the first. */
  resumeId: string | null;
  model: ModelSettings;
  /** Highest output offset the kernel already recorded for this turn (-1: none). */
  lastRecordedOffset: number;
  /** An earlier process may have started this turn's harness (a redelivery): look for it before starting one. */
  mayHaveStarted: boolean;
}>;

/** A turn that cannot run or finish, with the named reason the kernel records. */
export class TurnFailure extends Error {
  constructor(
    readonly reason: TurnFailureReason,
    message: string,
  ) {
    super(message);
    this.name = 'TurnFailure';
  }
}

export const NO_MODEL_MESSAGE =
  'no model endpoint is configured for this harness: start the sandbox-manager with BERTH_MODEL_BASE_URL (the model server root, e.g. https://api.anthropic.com) ' +
  'and BERTH_MODEL_API_KEY, or set config.model.base_url (and config.model.api_key_env) on the environment';

export const noKeyMessage = (secret: string): string =>
  `no model API key is configured: set ${secret} in the sandbox-manager's environment (the key is handed to the harness only through its process environment)`;
