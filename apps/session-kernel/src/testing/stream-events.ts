import { Streams, Subjects, toPublicEvent, type EventMessage, type RecordedEvent } from '@berth/contracts';
import { jetstream } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';

/**
 * Every event SESSION_EVT holds for one session, in stream order (duplicates included), as recorded:
 * a message whose `public` part is not the rendering of its record fails here.
 */
export async function streamEventsOf(nc: NatsConnection, sessionId: string): Promise<RecordedEvent[]> {
  const consumer = await jetstream(nc).consumers.get(Streams.events, { filter_subjects: Subjects.sessionEvents(sessionId) });
  const out: RecordedEvent[] = [];
  let pending = (await consumer.info(true)).num_pending;
  while (pending > 0) {
    const m = await consumer.next({ expires: 2_000 });
    if (!m) break;
    const { public: rendered, ...recorded } = m.json<EventMessage>();
    if (JSON.stringify(rendered) !== JSON.stringify(toPublicEvent(recorded as RecordedEvent))) throw new Error(`event ${m.subject} #${m.seq}: its public part is not its record's rendering`);
    out.push(recorded as RecordedEvent);
    pending = m.info.pending;
  }
  await consumer.delete().catch(() => undefined);
  return out;
}
