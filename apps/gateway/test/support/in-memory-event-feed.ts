import type { RecordedEvent } from '@berth/contracts';
import { BerthError, ErrorCodes } from '@berth/core';
import type { EventFeed, FeedSubscription } from '../../src/stream/event-feed.port';

type Listener = (event: RecordedEvent | null) => void;

/** The live feed in one process: what the outbox relay + NATS deliver in production. */
export class InMemoryEventFeed implements EventFeed {
  private readonly bySession = new Map<string, Set<Listener>>();
  private readonly everything = new Set<(event: RecordedEvent) => void>();
  /** Tests can drop deliveries to prove the stream fills gaps from the journal. */
  dropWhen: (event: RecordedEvent) => boolean = () => false;
  /** Tests can make the broker unreachable. */
  unavailable = false;

  async subscribe(sessionId: string, onEvent: Listener): Promise<FeedSubscription> {
    if (this.unavailable) throw new BerthError(ErrorCodes.UNAVAILABLE, 503, 'live events are unavailable');
    const listeners = this.bySession.get(sessionId) ?? new Set<Listener>();
    listeners.add(onEvent);
    this.bySession.set(sessionId, listeners);
    return { close: () => listeners.delete(onEvent) };
  }

  /** Every event of every session (the fake turn runner listens here). */
  onEvent(listener: (event: RecordedEvent) => void): () => void {
    this.everything.add(listener);
    return () => this.everything.delete(listener);
  }

  publish(events: readonly RecordedEvent[]): void {
    for (const event of events) {
      for (const listener of this.everything) listener(event);
      if (this.dropWhen(event)) continue;
      for (const listener of this.bySession.get(event.session_id) ?? []) listener(event);
    }
  }

  subscriberCount(sessionId: string): number {
    return this.bySession.get(sessionId)?.size ?? 0;
  }
}
