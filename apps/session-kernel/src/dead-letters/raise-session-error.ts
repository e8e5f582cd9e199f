import { parseSessionSubject, type SessionCommand } from '@berth/contracts';
import { isSafeToken, type Clock } from '@berth/core';
import type { DeadLetter } from '@berth/nats';

/**
 * The command that records a dead-lettered command as a `session.error` the session's user sees.
 * Its id derives from the dead letter, so handling the same dead letter twice appends one error.
 * Null when there is no session to tell, or when the dead letter is itself such an error (no loop).
 */
export function sessionErrorForDeadLetter(deadLetter: DeadLetter, clock: Clock): SessionCommand | null {
  const subject = parseSessionSubject(deadLetter.subject);
  if (!subject || !isSafeToken(subject.sessionId) || subject.type === 'RaiseSessionError') return null;
  const original = (deadLetter.body as { meta?: { command_id?: unknown } } | null)?.meta?.command_id;
  const key = isSafeToken(original) ? original : `seq${deadLetter.streamSeq}`;
  return {
    type: 'RaiseSessionError',
    data: {
      error_type: 'command_dead_lettered',
      message: `${subject.type} could not be processed after ${deadLetter.deliveryCount} attempt(s): ${deadLetter.reason}`.slice(0, 4096),
      retry_status: 'exhausted',
    },
    meta: {
      command_id: `dlq_${key}`.slice(0, 128),
      session_id: subject.sessionId,
      actor: 'session-kernel',
      issued_at: clock.now().toISOString(),
    },
  };
}
