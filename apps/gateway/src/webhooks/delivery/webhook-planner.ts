import type { RecordedEvent } from '@berth/contracts';
import type { SessionJournal, SessionReadModel, WebhookDeliveryStore, WebhookEndpointStore } from '@berth/ports';
import type { WebhookMetrics } from '@berth/telemetry';
import { planDeliveries, sessionWebhookEvents, sessionWebhookTypes } from '@berth/webhooks-domain';

export type WebhookPlannerDeps = Readonly<{
  endpoints: Pick<WebhookEndpointStore, 'allOf'>;
  deliveries: Pick<WebhookDeliveryStore, 'enqueue'>;
  sessions: Pick<SessionReadModel, 'getById'>;
  journal: Pick<SessionJournal, 'readEvents'>;
  now: () => string;
  metrics: WebhookMetrics;
}>;

/**
 * The first half of the delivery worker: a session event from the stream becomes outbox rows, one
 * per endpoint of the session's owner that subscribes to it (a disabled or failing one too: its
 * deliveries wait for it). Acked only once the rows are stored, so a crash before that redelivers
 * the event; the rows' ids are deterministic, so a redelivered event adds nothing. Only the
 * owner's own endpoints are ever planned.
 */
export class WebhookPlanner {
  constructor(private readonly d: WebhookPlannerDeps) {}

  /** How many new deliveries the event made. */
  async onEvent(event: RecordedEvent): Promise<number> {
    if (sessionWebhookTypes(event).length === 0) return 0;
    const owner = await this.ownerOf(event);
    if (!owner) return 0;
    const endpoints = await this.d.endpoints.allOf(owner);
    if (endpoints.length === 0) return 0;
    const events = sessionWebhookEvents(event, owner).map((e) => ({ ...e, subject: event.session_id }));
    const added = await this.d.deliveries.enqueue(planDeliveries(events, endpoints, this.d.now()));
    this.d.metrics.planned.inc(added);
    return added;
  }

  /** The session's owner: from the event itself, the read model, or (a row already gone) the journal's first event. */
  private async ownerOf(event: RecordedEvent): Promise<string | null> {
    if (event.type === 'SessionCreated') return event.data.owner_id;
    const record = await this.d.sessions.getById(event.session_id);
    if (record) return record.owner_id;
    const [created] = await this.d.journal.readEvents(event.session_id, { types: ['SessionCreated'], limit: 1 });
    return created?.type === 'SessionCreated' ? created.data.owner_id : null;
  }
}
