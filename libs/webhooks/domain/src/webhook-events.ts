import { createHash } from 'node:crypto';
import { EVENT_TYPES, type RecordedEvent, type ResourceWebhookEventType, type WebhookEvent, type WebhookEventType } from '@berth/contracts';
import type { EventToDeliver } from './deliveries';

/** Berth has no workspaces: every owner's resources are in this one. */
export const WORKSPACE_ID = 'default';

const digest = (text: string): string => createHash('sha256').update(text).digest('hex').slice(0, 32);

/**
 * The webhook types one session event stands for, in the order they are delivered. Names are the
 * Managed Agents webhook names (`session.status_idle` on the stream is `session.status_idled`
 * here); `session.running` / `session.idled` are the session's status, `session.status_*` its
 * status events, so both families fire together.
 */
export function sessionWebhookTypes(event: RecordedEvent): readonly WebhookEventType[] {
  switch (event.type) {
    case 'SessionCreated':
      return ['session.created'];
    case 'SessionUpdated':
      return ['session.updated'];
    case 'TurnStarted':
    case 'TurnResumed':
      return ['session.status_run_started', 'session.running'];
    case 'TurnAwaitingConfirmation':
      return ['session.status_idled', 'session.idled', 'session.requires_action'];
    case 'TurnCompleted':
    case 'TurnFailed':
      return ['session.status_idled', 'session.idled'];
    case 'TurnTranscriptPending':
      return ['session.status_rescheduled'];
    case 'SessionTerminated':
      return ['session.status_terminated'];
    case 'SessionArchived':
      return ['session.archived'];
    case 'SessionDeleted':
      return ['session.deleted'];
    case 'SessionErrorRaised':
      return ['session.error'];
    default:
      return [];
  }
}

/** The session event types that make webhook events (the webhooks consumer handles these, and acks the rest). */
export const WEBHOOK_SOURCE_EVENT_TYPES = EVENT_TYPES.filter((type) => sessionWebhookTypes({ type } as RecordedEvent).length > 0);

/** Deliveries of one session to one endpoint go out in this order: the journal's, then the type's place. */
export const sessionWebhookPosition = (seq: number, index: number): number => seq * 16 + index;

/** The webhook events a session event becomes. Ids derive from the event's own id, so a redelivered stream message yields the same events. */
export function sessionWebhookEvents(event: RecordedEvent, ownerId: string): readonly { event: WebhookEvent; position: number }[] {
  return sessionWebhookTypes(event).map((type, index) => ({
    event: {
      id: `wevt_${digest(`${event.id}/${type}`)}`,
      created_at: event.occurred_at,
      type: 'event',
      data: { type, id: event.session_id, organization_id: ownerId, workspace_id: WORKSPACE_ID },
    },
    position: sessionWebhookPosition(event.seq, index),
  }));
}

/** The first delivery of an event to an endpoint: one id, however often it is enqueued. */
export const deliveryIdFor = (endpointId: string, eventId: string): string => `whd_${digest(`${endpointId}/${eventId}`)}`;

/** A change of an agent, environment, vault or credential, as the service that wrote it saw it. */
export type ResourceChange = Readonly<{
  type: ResourceWebhookEventType;
  /** The changed resource (the credential, for `vault_credential.*`). */
  id: string;
  ownerId: string;
  /** `vault_credential.*`: the vault it is in. */
  vaultId?: string;
  /** When the change was written (the record's `updated_at`). */
  at: string;
  /** The agent version an `agent.*` change made: two updates within one millisecond stay two events. */
  version?: number;
}>;

/** A resource's lifecycle order, for changes within one millisecond (created before updated before archived before deleted). */
const LIFECYCLE_RANK: Readonly<Record<string, number>> = { created: 0, updated: 1, archived: 2, deleted: 3 };

/**
 * The webhook event of a configuration change. Its id derives from the change (type, resource,
 * time, version), so planning it twice adds nothing; one resource's changes reach an endpoint in
 * the order they happened (subject = the resource, position = the change's time in ms, then its
 * place in the lifecycle).
 */
export function resourceWebhookEvent(change: ResourceChange): EventToDeliver {
  const action = change.type.slice(change.type.indexOf('.') + 1);
  return {
    event: {
      id: `wevt_${digest(`${change.type}/${change.id}/${change.at}/${change.version ?? ''}`)}`,
      created_at: change.at,
      type: 'event',
      data: { type: change.type, id: change.id, organization_id: change.ownerId, workspace_id: WORKSPACE_ID, ...(change.vaultId === undefined ? {} : { vault_id: change.vaultId }) },
    },
    subject: change.id,
    position: Date.parse(change.at) * 16 + (LIFECYCLE_RANK[action] ?? 0),
  };
}
