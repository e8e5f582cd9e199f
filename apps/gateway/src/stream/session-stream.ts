import type { RecordedEvent } from '@berth/contracts';
import type { SessionJournal } from '@berth/ports';
import type { EventFeed, FeedSubscription } from './event-feed.port';
import { SSE_HEARTBEAT, sseFrame, type SseSink } from './sse';

const REPLAY_BATCH = 500;

export type SessionStreamOptions = Readonly<{
  sessionId: string;
  /** Replay events with seq > afterSeq; null = only what happens from now on (the reference API's behaviour). */
  afterSeq: number | null;
  journal: SessionJournal;
  feed: EventFeed;
  sink: SseSink;
  heartbeatMs: number;
}>;

/**
 * Journal replay, then live tail, with no gap and no duplicate:
 * 1. subscribe to the live feed first (so nothing published from now on is missed), buffering;
 * 2. replay from the journal after the cursor;
 * 3. then each live event is written only if its seq is the next one; anything ahead of that means
 *    events were missed (feed delivery is best effort), so the journal fills the gap.
 * Every step runs on one promise chain, so writes never interleave. `session.deleted` ends the stream.
 */
export async function runSessionStream(o: SessionStreamOptions): Promise<void> {
  let lastSent = 0;
  let open = true;
  let chain: Promise<void> = Promise.resolve();
  const buffered: (RecordedEvent | null)[] = [];
  let replayed = false;

  // Subscribe before anything else: events published from here on are buffered, never missed.
  const subscription: FeedSubscription = await o.feed.subscribe(o.sessionId, (event) => {
    if (!replayed) buffered.push(event);
    else enqueue(() => onLive(event));
  });
  o.sink.open();
  const heartbeat = setInterval(() => o.sink.write(SSE_HEARTBEAT), o.heartbeatMs);
  heartbeat.unref();
  const close = () => {
    if (!open) return;
    open = false;
    clearInterval(heartbeat);
    subscription.close();
  };
  const enqueue = (task: () => Promise<void> | void) => {
    chain = chain.then(() => (open ? task() : undefined)).catch(() => {
      // A failed journal read cannot be reported mid-stream: end it, the client resumes from its last id.
      close();
      o.sink.end();
    });
  };

  const emit = (events: readonly RecordedEvent[]) => {
    let chunk = '';
    let ended = false;
    for (const event of events) {
      if (event.seq <= lastSent) continue;
      chunk += sseFrame(event);
      lastSent = event.seq;
      if (event.type === 'SessionDeleted') {
        ended = true;
        break;
      }
    }
    if (chunk) o.sink.write(chunk);
    if (ended) {
      close();
      o.sink.end();
    }
  };

  const catchUp = async () => {
    for (;;) {
      const batch = await o.journal.readEvents(o.sessionId, { afterSeq: lastSent, limit: REPLAY_BATCH, order: 'asc' });
      if (!open) return;
      emit(batch);
      if (batch.length < REPLAY_BATCH || !open) return;
    }
  };

  const onLive = async (event: RecordedEvent | null) => {
    if (event && event.seq <= lastSent) return;
    if (event && event.seq === lastSent + 1) return emit([event]);
    await catchUp();
  };

  o.sink.onClose(close);
  if (!open) return;

  lastSent = o.afterSeq ?? (await o.journal.lastSeq(o.sessionId));
  enqueue(catchUp);
  enqueue(() => {
    replayed = true;
    const pending = buffered.splice(0);
    return pending.reduce<Promise<void>>((p, event) => p.then(() => onLive(event)), Promise.resolve());
  });
  await chain;
}
