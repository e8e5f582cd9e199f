import type { HarnessKind, PermissionMode, TurnFailureReason } from '@berth/contracts';
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
  permissionMode: PermissionMode;
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
