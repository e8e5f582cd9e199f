import { Subjects, parseSessionSubject } from '@berth/contracts';
import { isSafeToken } from '@berth/core';

/** Headers a dead-letter copy carries besides the original message's own. */
export const DeadLetterHeaders = {
  reason: 'Berth-Dead-Letter-Reason',
  originalSubject: 'Berth-Original-Subject',
  deliveryCount: 'Berth-Delivery-Count',
} as const;

/** `session.<id>.cmd.<Type>` → `dlq.session.<id>.cmd.<Type>`; unparseable subjects go to `unknown`. */
export function deadLetterSubjectFor(subject: string): string {
  const parsed = parseSessionSubject(subject);
  if (!parsed || !isSafeToken(parsed.sessionId) || !isSafeToken(parsed.type)) {
    return Subjects.deadLetter('unknown', 'cmd', 'unknown');
  }
  return Subjects.deadLetter(parsed.sessionId, parsed.kind, parsed.type);
}

/** Header values must be one line; reasons come from error messages. */
export const headerSafe = (text: string): string => text.replace(/[\r\n]+/g, ' ').slice(0, 1024);
