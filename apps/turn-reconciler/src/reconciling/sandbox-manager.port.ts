import type {
  TranscriptRestoreRequest,
  TurnEffectReply,
  TurnOutputRecoveryRequest,
  TurnProbeReply,
  TurnProbeRequest,
  TurnReattachRequest,
} from '@berth/contracts';

/**
 * The sandbox-manager's answers to the reconciler (request/reply with a timeout). Each call
 * rejects when no answer arrives in time; the reconciler then counts a failed attempt.
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
