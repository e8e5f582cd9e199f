import { parseSessionSubject, Streams, Subjects } from '@berth/contracts';
import { DeliverPolicy, jetstream } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import type { OpenTurnDirectory } from '../reconciling/sandbox-manager.port';

/**
 * Every session that ever started a turn, from SESSION_EVT itself: an ephemeral ordered consumer
 * delivering only the last `TurnStarted` per session subject, headers only. Which of those turns
 * are still open is for the journal to say (the service folds each session's journal).
 */
export class JetStreamOpenTurnDirectory implements OpenTurnDirectory {
  constructor(
    private readonly nc: NatsConnection,
    private readonly batch = 500,
  ) {}

  async sessionsWithTurns(): Promise<readonly string[]> {
    const js = jetstream(this.nc);
    const consumer = await js.consumers.get(Streams.events, {
      filter_subjects: Subjects.eventsOfType('TurnStarted'),
      deliver_policy: DeliverPolicy.LastPerSubject,
      headers_only: true,
    });
    const { num_pending } = await consumer.info(true);
    const sessions = new Set<string>();
    let seen = 0;
    while (seen < num_pending) {
      const messages = await consumer.fetch({ max_messages: Math.min(this.batch, num_pending - seen), expires: 2_000 });
      let got = 0;
      for await (const m of messages) {
        got += 1;
        const parsed = parseSessionSubject(m.subject);
        if (parsed) sessions.add(parsed.sessionId);
      }
      if (got === 0) break;
      seen += got;
    }
    await consumer.delete().catch(() => undefined);
    return [...sessions];
  }
}
