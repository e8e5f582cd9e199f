import type { RecordedEvent } from '@berth/contracts';
import type { JournalQuery, SessionJournal } from '@berth/ports';
import type { EventFeed } from './event-feed.port';
import { runSessionStream } from './session-stream';
import type { SseSink } from './sse';

const SESSION = 'sesn_1';
const event = (seq: number, type: RecordedEvent['type'] = 'TurnStarted'): RecordedEvent =>
  ({ type, data: type === 'TurnStarted' ? { turn_id: `turn_${seq}` } : {}, id: `sevt_${seq}`, session_id: SESSION, seq, schema_version: 1, command_id: `cmd_${seq}`, occurred_at: '2026-01-01T00:00:00.000Z' }) as RecordedEvent;

/** A journal whose reads can be held, to publish live events while a replay is in flight. */
class ControlledJournal {
  readonly events: RecordedEvent[] = [];
  private gate: Promise<void> = Promise.resolve();
  private release: () => void = () => undefined;
  hold(): void {
    this.gate = new Promise((resolve) => (this.release = resolve));
  }
  open(): void {
    this.release();
  }
  async readEvents(_: string, q: JournalQuery = {}): Promise<RecordedEvent[]> {
    await this.gate;
    return this.events.filter((e) => e.seq > (q.afterSeq ?? 0)).slice(0, q.limit ?? Infinity);
  }
  async lastSeq(): Promise<number> {
    return this.events.length;
  }
}

class ManualFeed implements EventFeed {
  listener: ((e: RecordedEvent | null) => void) | null = null;
  closed = false;
  async subscribe(_: string, onEvent: (e: RecordedEvent | null) => void) {
    this.listener = onEvent;
    return { close: () => (this.closed = true) };
  }
}

class BufferSink implements SseSink {
  text = '';
  opened = false;
  open() {
    this.opened = true;
  }
  ended = false;
  private closeListener: () => void = () => undefined;
  write(chunk: string) {
    this.text += chunk;
  }
  end() {
    this.ended = true;
  }
  onClose(listener: () => void) {
    this.closeListener = listener;
  }
  disconnect() {
    this.closeListener();
  }
  get seqs(): number[] {
    return [...this.text.matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]));
  }
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('session stream: replay then live tail', () => {
  const start = (journal: ControlledJournal, feed: ManualFeed, sink: BufferSink, afterSeq: number | null) =>
    runSessionStream({ sessionId: SESSION, afterSeq, journal: journal as unknown as SessionJournal, feed, sink, heartbeatMs: 60_000 });

  it('sends events published during the replay exactly once, in order', async () => {
    const journal = new ControlledJournal();
    const feed = new ManualFeed();
    const sink = new BufferSink();
    journal.events.push(event(1), event(2), event(3));
    journal.hold();
    const running = start(journal, feed, sink, 0);
    await settle();
    // Committed and published while the replay read is still in flight.
    journal.events.push(event(4), event(5));
    feed.listener?.(event(4));
    feed.listener?.(event(5));
    journal.open();
    await running;
    await settle();
    feed.listener?.(event(5));
    journal.events.push(event(6));
    feed.listener?.(event(6));
    await settle();
    expect(sink.opened).toBe(true);
    expect(sink.seqs).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it('fills a gap in live delivery from the journal', async () => {
    const journal = new ControlledJournal();
    const feed = new ManualFeed();
    const sink = new BufferSink();
    journal.events.push(event(1));
    await start(journal, feed, sink, 0);
    journal.events.push(event(2), event(3), event(4));
    feed.listener?.(event(4));
    await settle();
    await settle();
    expect(sink.seqs).toEqual([1, 2, 3, 4]);
  });

  it('treats an unparsable delivery as a prompt to read the journal', async () => {
    const journal = new ControlledJournal();
    const feed = new ManualFeed();
    const sink = new BufferSink();
    await start(journal, feed, sink, null);
    journal.events.push(event(1));
    feed.listener?.(null);
    await settle();
    await settle();
    expect(sink.seqs).toEqual([1]);
  });

  it('ends on session.deleted and releases the subscription on disconnect', async () => {
    const journal = new ControlledJournal();
    const feed = new ManualFeed();
    const sink = new BufferSink();
    journal.events.push(event(1), event(2, 'SessionDeleted'), event(3));
    await start(journal, feed, sink, 0);
    expect(sink.seqs).toEqual([1, 2]);
    expect(sink.text).toContain('event: session.deleted');
    expect(sink.ended).toBe(true);
    expect(feed.closed).toBe(true);

    const other = new BufferSink();
    const feed2 = new ManualFeed();
    await start(new ControlledJournal(), feed2, other, null);
    other.disconnect();
    expect(feed2.closed).toBe(true);
  });
});
