import type {
  TranscriptRestoreRequest,
  TurnEffectReply,
  TurnOutputRecoveryRequest,
  TurnProbeReply,
  TurnProbeRequest,
  TurnReattachRequest,
} from '@berth/contracts';

/**
 * No sandbox-manager answered in time: none is running, one is restarting or overloaded, or the
 * broker is away. Unlike a wrong answer, it says nothing about the turn.
 */
export class SandboxManagerUnanswered extends Error {
  override readonly name = 'SandboxManagerUnanswered';
}

/**
 * The sandbox-manager's answers to the reconciler (request/reply with a timeout). A call rejects
 * with `SandboxManagerUnanswered` when no answer arrives in time (the reconciler asks again, burning
 * no attempt) and with any other error when the answer is unusable (a failed attempt).
 */
export interface SandboxManagerClient {
  probe(request: TurnProbeRequest): Promise<TurnProbeReply>;
  reattach(request: TurnReattachRequest): Promise<TurnEffectReply>;
  recoverOutput(request: TurnOutputRecoveryRequest): Promise<TurnEffectReply>;
  restoreTranscript(request: TranscriptRestoreRequest): Promise<TurnEffectReply>;
}

/** Where the reconciler finds, at start, the sessions that may have a turn in flight (their journal says which). */
export interface OpenTurnDirectory {
  sessionsWithTurns(): Promise<readonly string[]>;
}
