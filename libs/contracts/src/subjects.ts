import { asOwnerId, asSessionId } from '@berth/core';
import type { CommandType } from './commands';
import type { EventType } from './events';

/**
 * The one place subjects, streams and consumers are named. The session id comes before the kind so
 * `session.<id>.>` is one session and `session.*.evt.>` is every event. An event subject carries the
 * session's owner after `evt` (`session.<id>.evt.<owner>.<Type>`), so NATS can hand one owner their
 * own events; events published before the owner token existed (`session.<id>.evt.<Type>`) still
 * match every `session.<id>.evt.>` / `session.*.evt.>` filter. Ids are validated tokens.
 */
export const Streams = {
  commands: 'SESSION_CMD',
  events: 'SESSION_EVT',
  deadLetters: 'SESSION_DLQ',
  /** One owner's events, sourced from SESSION_EVT into the subscribers' account (docs/events.md). */
  ownerEvents: (ownerId: string): string => `OWNER_EVT_${asOwnerId(ownerId)}`,
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
  event: (sessionId: string, ownerId: string, type: EventType): string =>
    `session.${asSessionId(sessionId)}.evt.${asOwnerId(ownerId)}.${type}`,
  deadLetter: (sessionId: string, kind: 'cmd' | 'evt', type: string): string =>
    `dlq.session.${asSessionId(sessionId)}.${kind}.${type}`,
  /** Everything of one session (commands and events). */
  session: (sessionId: string): string => `session.${asSessionId(sessionId)}.>`,
  sessionEvents: (sessionId: string): string => `session.${asSessionId(sessionId)}.evt.>`,
  sessionCommands: (sessionId: string): string => `session.${asSessionId(sessionId)}.cmd.>`,
  allCommands: 'session.*.cmd.>',
  allEvents: 'session.*.evt.>',
  allDeadLetters: 'dlq.session.>',
  eventsOfType: (type: EventType): string => `session.*.evt.*.${type}`,
  /** The same filter for events published before the owner token (they stay until retention drops them). */
  legacyEventsOfType: (type: EventType): string => `session.*.evt.${type}`,
  /** Every event of one owner's sessions. */
  ownerEvents: (ownerId: string): string => `session.*.evt.${asOwnerId(ownerId)}.*`,
  /** Request/reply queries between services (core NATS, not JetStream). */
  query: (service: 'sandbox-manager' | 'session-kernel', name: string): string => `berth.query.${service}.${name}`,
  /**
   * Each NATS user's private reply subjects (its connection's `inboxPrefix`): a user may subscribe
   * only to its own, so nobody reads another's request replies or pull-consumer deliveries.
   */
  serviceInbox: (service: string): string => `_INBOX.svc.${service}`,
  ownerInbox: (ownerId: string): string => `_INBOX.owner.${asOwnerId(ownerId)}`,
  /** Every service's inbox (the kernel answers commands there). */
  allServiceInboxes: '_INBOX.svc.*.>',
  /** Where SESSION_EVT hands an owner's events to that owner's stream in the subscribers' account. */
  ownerDelivery: (ownerId: string): string => `berth.deliver.${asOwnerId(ownerId)}`,
  allOwnerDeliveries: 'berth.deliver.>',
} as const;

export type SessionSubject = Readonly<{ sessionId: string; kind: 'cmd' | 'evt'; type: string; ownerId: string | null }>;

/**
 * Parses `session.<id>.cmd.<Type>`, `session.<id>.evt.<owner>.<Type>` and the pre-owner
 * `session.<id>.evt.<Type>` (ownerId null); null for anything else.
 */
export function parseSessionSubject(subject: string): SessionSubject | null {
  const parts = subject.split('.');
  if (parts[0] !== 'session') return null;
  if (parts.length === 4 && (parts[2] === 'cmd' || parts[2] === 'evt')) return { sessionId: parts[1], kind: parts[2], type: parts[3], ownerId: null };
  if (parts.length === 5 && parts[2] === 'evt') return { sessionId: parts[1], kind: 'evt', type: parts[4], ownerId: parts[3] };
  return null;
}

/** Message headers Berth sets on every publish. */
export const Headers = {
  msgId: 'Nats-Msg-Id',
  correlationId: 'Berth-Correlation-Id',
  causationId: 'Berth-Causation-Id',
  schemaVersion: 'Berth-Schema-Version',
  replyTo: 'Berth-Reply-To',
} as const;

/**
 * The servers of a NATS URL (`NATS_URL`, `BERTH_NATS_PUBLIC_URL`, a subscriber credential's
 * `servers`): one server, or a cluster's servers separated by commas.
 */
export function natsServers(url: string): string[] {
  return url
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
}
