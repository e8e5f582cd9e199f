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

  /**
   * Caller holds the session lock; `events` are in seq order. Whatever of the session is still
   * unpublished below them goes first: a publish that failed (a stream leader lost, say), in this
   * process or in another kernel replica that then handed the session on, must not be overtaken on
   * SESSION_EVT by a later command's events while it waits for a relay. Publishes are pipelined
   * (one connection keeps their order) unless something is resent: then one by one, so the resent
   * events are stored before what follows them.
   */
  async publish(sessionId: string, ownerId: string, events: readonly RecordedEvent[]): Promise<void> {
    if (events.length === 0) return;
    const earlier = await this.journal.unpublishedBefore(sessionId, events[0].seq);
    const ordered = [...earlier, ...events];
    const send = (e: RecordedEvent) =>
      this.publisher.publish(Subjects.event(sessionId, ownerId, e.type), toEventMessage(e), { msgId: eventMsgId(e), headers: { [Headers.causationId]: e.command_id } });
    const results = earlier.length > 0 ? await settleInOrder(ordered, send) : await Promise.allSettled(ordered.map(send));
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed !== undefined) throw failed.reason;
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
      return this.journal.markPublished(marks);
    });
    return this.marking;
  }

  /**
   * Walks the journal's outbox once, page by page, and publishes what is left; returns how many.
   * Events a command published itself after the relay read them (it was waiting for their session
   * lock) are skipped, and a page that held only those ends the walk, so under load the relay does
   * not chase what is in flight. A session whose publish fails is skipped for the rest of the walk
   * (its later events must not overtake it) and tried again next pass; the others go on.
   */
  async relay(batchSize = 500): Promise<number> {
    if (this.relaying) return this.relaying;
    this.relaying = (async () => {
      let total = 0;
      const failed = new Map<string, string>();
      for (let after: string | null = null; ; ) {
        this.publishedSinceRelayRead = new Map();
        const page = await this.journal.unpublished({ limit: batchSize, after });
        const bySession = new Map<string, RecordedEvent[]>();
        for (const e of page.events) {
          if (failed.has(e.session_id)) continue;
          const events = bySession.get(e.session_id);
          if (events) events.push(e);
          else bySession.set(e.session_id, [e]);
        }
        const sessions = [...bySession];
        const results = await Promise.allSettled(
          sessions.map(([sessionId, events]) =>
            this.locks.run(sessionId, async () => {
              const done = this.publishedSinceRelayRead?.get(sessionId) ?? 0;
              const left = events.filter((e) => e.seq > done);
              if (left.length > 0) await this.publish(sessionId, await this.owners(sessionId), left);
              return left.length;
            }),
          ),
        );
        let count = 0;
        results.forEach((result, i) => {
          if (result.status === 'fulfilled') count += result.value;
          else failed.set(sessions[i]?.[0] as string, errorText(result.reason));
        });
        total += count;
        const onlyInFlight = page.events.length > 0 && count === 0 && results.every((r) => r.status === 'fulfilled');
        if (page.next === null || onlyInFlight) break;
        after = page.next;
      }
      if (failed.size > 0) {
        const first = [...failed].slice(0, 5).map(([session_id, reason]) => ({ session_id, reason }));
        this.log.error('outbox relay: some sessions could not be published; retrying them next pass', { sessions: failed.size, failures: first });
      }
      return total;
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

const errorText = (e: unknown): string => (e instanceof Error ? e.message : String(e));

/** Sends one at a time, stopping at the first failure (what follows it is reported failed too). */
async function settleInOrder<T>(items: readonly T[], send: (item: T) => Promise<unknown>): Promise<PromiseSettledResult<unknown>[]> {
  const results: PromiseSettledResult<unknown>[] = [];
  for (const item of items) {
    try {
      results.push({ status: 'fulfilled', value: await send(item) });
    } catch (reason) {
      return [...results, { status: 'rejected', reason }];
    }
  }
  return results;
}
