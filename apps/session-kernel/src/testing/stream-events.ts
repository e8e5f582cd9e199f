import { Streams, Subjects, type RecordedEvent } from '@berth/contracts';
import { jetstream } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';

/** Every message SESSION_EVT holds for one session, in stream order (duplicates included). */
export async function streamEventsOf(nc: NatsConnection, sessionId: string): Promise<RecordedEvent[]> {
  const consumer = await jetstream(nc).consumers.get(Streams.events, { filter_subjects: Subjects.sessionEvents(sessionId) });
  const out: RecordedEvent[] = [];
  let pending = (await consumer.info(true)).num_pending;
  while (pending > 0) {
    const m = await consumer.next({ expires: 2_000 });
    if (!m) break;
    out.push(m.json<RecordedEvent>());
    pending = m.info.pending;
  }
  await consumer.delete().catch(() => undefined);
  return out;
}
