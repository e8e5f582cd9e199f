import type { RecordedEvent } from '@berth/contracts';

/** A live subscription; `close` is idempotent. */
export type FeedSubscription = Readonly<{ close(): void }>;

/**
 * New events of one session as they are published. Delivery is best effort and may repeat,
 * reorder or skip: the stream deduplicates by seq and fills gaps from the journal. `onEvent` may
 * also be told "something arrived" with no parsable event (null), which triggers a journal read.
 */
export interface EventFeed {
  /** Resolves once the subscription is active, so nothing published afterwards is missed. */
  subscribe(sessionId: string, onEvent: (event: RecordedEvent | null) => void): Promise<FeedSubscription>;
}
