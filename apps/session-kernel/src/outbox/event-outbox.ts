import { Headers, Subjects, toEventMessage, type RecordedEvent } from '@berth/contracts';
import type { JetStreamPublisher } from '@berth/nats';
import type { Logger, PublishedMark, SessionJournal } from '@berth/ports';
import type { KernelMetrics } from '@berth/telemetry';
import type { CrashPoints } from '../config/crash-points';
import type { SessionLocks } from '../commands/session-locks';

/** What the outbox needs from a JetStream publisher. */
export type EventPublisher = Pick<JetStreamPublisher, 'publish'>;

/** The owner of a session, for the subjects of events the relay republishes (read from the kernel's state). */
export type SessionOwners = (sessionId: string) => Promise<string>;

/** The deterministic broker message id of an event: a republish is dropped by JetStream dedupe. */
export const eventMsgId = (e: Pick<RecordedEvent, 'session_id' | 'seq'>): string => `${e.session_id}:${e.seq}`;

/**
 * Publishes committed events to SESSION_EVT and marks them published in the journal. Right after a
 * commit the kernel publishes the command's events; the relay republishes whatever a crash left
 * unpublished (at start and periodically). Both go through the session lock, so one session's
 * events are published in seq order.
 */
export class EventOutbox {
  private timer: NodeJS.Timeout | null = null;
  private relaying: Promise<number> | null = null;
  private marks: PublishedMark[] = [];
  private marking: Promise<void> | null = null;
  /** While a relay pass runs: per session, the highest seq published and marked since its read. */
  private publishedSinceRelayRead: Map<string, number> | null = null;

  constructor(
    private readonly journal: SessionJournal,
    private readonly owners: SessionOwners,
    private readonly publisher: EventPublisher,
    private readonly locks: SessionLocks,
    private readonly crash: CrashPoints,
    private readonly log: Logger,
    private readonly metrics: Pick<KernelMetrics, 'eventsPublished'>,
  ) {}

  /** Caller holds the session lock. Publishes are pipelined: one connection keeps their order. */
  async publish(sessionId: string, ownerId: string, events: readonly RecordedEvent[]): Promise<void> {
    if (events.length === 0) return;
    const ordered = [...events].sort((a, b) => a.seq - b.seq);
    await Promise.all(
      ordered.map((e) =>
        this.publisher.publish(Subjects.event(sessionId, ownerId, e.type), toEventMessage(e), {
          msgId: eventMsgId(e),
          headers: { [Headers.causationId]: e.command_id },
        }),
      ),
    );
    for (const e of ordered) this.metrics.eventsPublished.inc({ type: e.type });
    this.crash.reached('after-publish-before-mark');
    await this.markPublished({ sessionId, seqs: ordered.map((e) => e.seq) });
    const last = ordered[ordered.length - 1].seq;
    this.publishedSinceRelayRead?.set(sessionId, Math.max(last, this.publishedSinceRelayRead.get(sessionId) ?? 0));
  }

  /**
   * Marks from publishes that finish in the same event-loop turn go to the store in one write.
   * Each caller still waits for the write holding its own mark; a lost mark only means a republish
   * the broker drops (same message id).
   */
  private markPublished(mark: PublishedMark): Promise<void> {
    this.marks.push(mark);
    this.marking ??= new Promise<void>((resolve) => setImmediate(resolve)).then(() => {
      const marks = this.marks;
      this.marks = [];
      this.marking = null;
      return this.journal.markPublishedMany
        ? this.journal.markPublishedMany(marks)
        : Promise.all(marks.map((m) => this.journal.markPublished(m.sessionId, m.seqs))).then(() => undefined);
    });
    return this.marking;
  }

  /**
   * Publishes the journal's unpublished events until none are left; returns how many. Events a
   * command published itself after the relay read them (it was waiting for their session lock) are
   * skipped, and a pass that found only those ends the relay, so under load it does not keep
   * re-sending what is in flight.
   */
  async relay(batchSize = 500): Promise<number> {
    if (this.relaying) return this.relaying;
    this.relaying = (async () => {
      let total = 0;
      for (;;) {
        this.publishedSinceRelayRead = new Map();
        const pending = await this.journal.unpublished(batchSize);
        if (pending.length === 0) return total;
        const bySession = new Map<string, RecordedEvent[]>();
        for (const e of pending) bySession.set(e.session_id, [...(bySession.get(e.session_id) ?? []), e]);
        const republished = await Promise.all(
          [...bySession].map(([sessionId, events]) =>
            this.locks.run(sessionId, async () => {
              const done = this.publishedSinceRelayRead?.get(sessionId) ?? 0;
              const left = events.filter((e) => e.seq > done);
              if (left.length > 0) await this.publish(sessionId, await this.owners(sessionId), left);
              return left.length;
            }),
          ),
        );
        const count = republished.reduce((a, b) => a + b, 0);
        total += count;
        if (count === 0) return total;
      }
    })().finally(() => {
      this.relaying = null;
      this.publishedSinceRelayRead = null;
    });
    return this.relaying;
  }

  startRelay(intervalMs: number): void {
    const tick = (): void => {
      this.relay()
        .catch((e) => this.log.error('outbox relay failed (will retry)', { err: e }))
        .finally(() => {
          if (this.timer) this.timer = setTimeout(tick, intervalMs);
        });
    };
    this.timer = setTimeout(tick, intervalMs);
  }

  async stopRelay(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.relaying?.catch(() => undefined);
  }
}
