import { asSessionId } from '@berth/core';
import type { CommandType } from './commands';
import type { EventType } from './events';

/**
 * The one place subjects, streams and consumers are named. The session id comes before the kind so
 * `session.<id>.>` is one session and `session.*.evt.>` is every event. Ids are validated tokens.
 */
export const Streams = {
  commands: 'SESSION_CMD',
  events: 'SESSION_EVT',
  deadLetters: 'SESSION_DLQ',
} as const;

export const Consumers = {
  kernel: 'session-kernel',
  /** The sandbox-manager's control events (everything but `TurnStarted`); named as before the turns moved out. */
  sandboxManagerControl: 'sandbox-manager',
  /** The sandbox-manager's turns: `TurnStarted` only, each delivery in flight for as long as its turn runs. */
  sandboxManagerTurns: 'sandbox-manager-turns',
  turnReconciler: 'turn-reconciler',
  webhooks: 'webhooks',
} as const;
export type ConsumerName = (typeof Consumers)[keyof typeof Consumers];

export const Subjects = {
  command: (sessionId: string, type: CommandType): string => `session.${asSessionId(sessionId)}.cmd.${type}`,
  event: (sessionId: string, type: EventType): string => `session.${asSessionId(sessionId)}.evt.${type}`,
  deadLetter: (sessionId: string, kind: 'cmd' | 'evt', type: string): string =>
    `dlq.session.${asSessionId(sessionId)}.${kind}.${type}`,
  /** Everything of one session (commands and events). */
  session: (sessionId: string): string => `session.${asSessionId(sessionId)}.>`,
  sessionEvents: (sessionId: string): string => `session.${asSessionId(sessionId)}.evt.>`,
  allCommands: 'session.*.cmd.>',
  allEvents: 'session.*.evt.>',
  allDeadLetters: 'dlq.session.>',
  eventsOfType: (type: EventType): string => `session.*.evt.${type}`,
  /** Request/reply queries between services (core NATS, not JetStream). */
  query: (service: 'sandbox-manager' | 'session-kernel', name: string): string => `berth.query.${service}.${name}`,
  /** Where a caller waits for a command's outcome. */
  replyInbox: (prefix = '_INBOX'): string => prefix,
} as const;

/** Parses `session.<id>.(cmd|evt).<Type>`; null for anything else. */
export function parseSessionSubject(subject: string): { sessionId: string; kind: 'cmd' | 'evt'; type: string } | null {
  const parts = subject.split('.');
  if (parts.length !== 4 || parts[0] !== 'session' || (parts[2] !== 'cmd' && parts[2] !== 'evt')) return null;
  return { sessionId: parts[1], kind: parts[2], type: parts[3] };
}

/** Message headers Berth sets on every publish. */
export const Headers = {
  msgId: 'Nats-Msg-Id',
  correlationId: 'Berth-Correlation-Id',
  causationId: 'Berth-Causation-Id',
  schemaVersion: 'Berth-Schema-Version',
  replyTo: 'Berth-Reply-To',
} as const;
