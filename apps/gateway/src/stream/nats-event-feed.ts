import { Subjects, parseRecordedEvent, type RecordedEvent } from '@berth/contracts';
import { BerthError, ErrorCodes } from '@berth/core';
import type { NatsConnection } from '@nats-io/nats-core';
import type { EventFeed, FeedSubscription } from './event-feed.port';

/**
 * Live session events over core NATS: JetStream-published messages on `session.<id>.evt.>` reach
 * core subscribers too, with no consumer to manage per stream connection. A message that does not
 * parse is still a signal that something arrived (null), and the stream reads the journal.
 */
export class NatsEventFeed implements EventFeed {
  constructor(private readonly nc: NatsConnection) {}

  async subscribe(sessionId: string, onEvent: (event: RecordedEvent | null) => void): Promise<FeedSubscription> {
    if (this.nc.isClosed()) throw new BerthError(ErrorCodes.UNAVAILABLE, 503, 'live events are unavailable: the broker connection is closed');
    const sub = this.nc.subscribe(Subjects.sessionEvents(sessionId), {
      callback: (error, msg) => {
        if (error) return onEvent(null);
        let event: RecordedEvent | null = null;
        try {
          event = parseRecordedEvent(msg.json());
        } catch {
          event = null;
        }
        onEvent(event);
      },
    });
    // The server has registered the interest once a flush round-trips: from here nothing is missed.
    await this.nc.flush();
    return { close: () => sub.unsubscribe() };
  }
}
