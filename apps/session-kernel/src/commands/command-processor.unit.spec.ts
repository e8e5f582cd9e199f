import { Headers, toPublicEvent, type CommandOutcome, type EventMessage } from '@berth/contracts';
import { ValidationError } from '@berth/core';
import { FixedClock } from '@berth/core/testing';
import { decodeJson, type InboundMessage } from '@berth/nats';
import { createSessionKernel } from '@berth/session-kernel';
import type { PublishedMark } from '@berth/ports';
import { MemoryStore, recordingLogger, silentLogger } from '@berth/testing';
import { kernelMetrics } from '@berth/telemetry';
import { Registry } from 'prom-client';
import type { CrashPoint } from '../config/kernel.config';
import { EventOutbox, type EventPublisher } from '../outbox/event-outbox';
import { createSession, submitMessage } from '../testing/commands';
import { CommandOrder } from './command-order';
import { CommandProcessor } from './command-processor';
import { SessionLocks } from './session-locks';

/** Records what would reach SESSION_EVT, with a little latency so publishes can interleave. */
class RecordingPublisher implements EventPublisher {
  readonly published: { subject: string; msgId?: string; event: EventMessage }[] = [];
  /** While set, publishes wait for it (to hold a command between commit and publish). */
  gate: Promise<void> | null = null;
  /** Sessions whose publishes the broker refuses (e.g. a message over its max_payload). */
  readonly refused = new Set<string>();
  async publish(subject: string, payload: unknown, options: { msgId?: string } = {}) {
    await new Promise((r) => setImmediate(r));
    await this.gate;
    const event = payload as EventMessage;
    if (this.refused.has(event.session_id)) throw new Error(`MAX_PAYLOAD_EXCEEDED for ${event.session_id}`);
    this.published.push({ subject, msgId: options.msgId, event });
    return { stream: 'SESSION_EVT', seq: this.published.length, duplicate: false };
  }
}

/** Records each mark write the outbox makes. */
class MarkRecordingStore extends MemoryStore {
  readonly markWrites: PublishedMark[][] = [];
  constructor() {
    super();
    const markPublished = this.journal.markPublished.bind(this.journal);
    this.journal.markPublished = async (marks) => {
      this.markWrites.push([...marks]);
      await markPublished(marks);
    };
  }
}

const unpublished = async (store: MemoryStore, limit = 100) => (await store.journal.unpublished({ limit })).events;

/** One kernel replica; a second one given the first's store and publisher shares the journal and SESSION_EVT. */
function setup(store = new MarkRecordingStore(), publisher = new RecordingPublisher()) {
  const locks = new SessionLocks();
  const crashes: CrashPoint[] = [];
  const crash = { reached: (p: CrashPoint) => void crashes.push(p) };
  const metrics = kernelMetrics(new Registry());
  const logged = recordingLogger();
  const kernel = createSessionKernel({ journal: store.journal, snapshots: store.snapshots, clock: new FixedClock() });
  const outbox = new EventOutbox(store.journal, async (id) => (await kernel.load(id)).state.owner_id, publisher, locks, crash, logged.log, metrics);
  const replies: { subject: string; outcome: CommandOutcome }[] = [];
  const processor = new CommandProcessor({
    kernel,
    outbox,
    locks,
    // One kernel here: nothing older is ever pending elsewhere.
    order: new CommandOrder({ oldest: async () => null, maxWaitMs: 1_000, workingEveryMs: 1_000, log: silentLogger }),
    crash,
    log: silentLogger,
    metrics,
    replies: { publish: (subject, data) => void replies.push({ subject, outcome: decodeJson(data) as CommandOutcome }) },
  });
  const deliver = (body: unknown, subject: string, replyTo = '_INBOX.test'): InboundMessage => ({
    subject,
    body,
    headers: { [Headers.replyTo]: replyTo },
    deliveryCount: 1,
    streamSeq: 1,
    redelivered: false,
    working: () => undefined,
  });
  return { store, publisher, outbox, kernel, processor, replies, crashes, deliver, logged };
}

const subjectOf = (c: { type: string; meta: { session_id: string } }) => `session.${c.meta.session_id}.cmd.${c.type}`;

describe('CommandProcessor', () => {
  it('publishes one session’s events in seq order with <session>:<seq> ids even when its commands arrive together', async () => {
    const { store, publisher, processor, replies, deliver } = setup();
    const create = createSession('sesn_a');
    await processor.handle(deliver(create, subjectOf(create)));
    const messages = Array.from({ length: 10 }, (_, i) => submitMessage('sesn_a', `m${i}`));
    const results = await Promise.all(messages.map((m) => processor.handle(deliver(m, subjectOf(m)))));

    expect(results.every((r) => r.type === 'ack')).toBe(true);
    const seqs = publisher.published.map((p) => p.event.seq);
    expect(seqs).toEqual(seqs.map((_, i) => i + 1));
    expect(publisher.published.map((p) => p.msgId)).toEqual(seqs.map((s) => `sesn_a:${s}`));
    // The owner rides in the subject; the body carries the public rendering beside the record.
    expect(publisher.published[0].subject).toBe('session.sesn_a.evt.owner_1.SessionCreated');
    expect(publisher.published[0].event.public).toEqual(toPublicEvent(publisher.published[0].event));
    expect(await unpublished(store)).toEqual([]);
    expect(replies).toHaveLength(11);
  });

  it('answers a redelivered command with its first outcome and publishes nothing new', async () => {
    const { publisher, processor, replies, deliver } = setup();
    const create = createSession('sesn_b');
    await processor.handle(deliver(create, subjectOf(create)));
    const count = publisher.published.length;
    await processor.handle(deliver(create, subjectOf(create)));
    expect(publisher.published).toHaveLength(count);
    expect(replies.map((r) => r.outcome.ok && r.outcome.duplicate)).toEqual([false, true]);
  });

  it('refuses a malformed command with a coded reply and throws it as bad input (to be dead-lettered)', async () => {
    const { processor, replies, deliver } = setup();
    const bad = { ...submitMessage('sesn_c', 'x'), data: { turn_id: 'turn_1', content: [] } };
    await expect(processor.handle(deliver(bad, subjectOf(bad)))).rejects.toBeInstanceOf(ValidationError);
    expect(replies[0].outcome).toMatchObject({ ok: false, command_id: bad.meta.command_id, error: { code: 'VALIDATION_ERROR', status: 400 } });
  });

  it('rejects a command whose subject names another session', async () => {
    const { processor, deliver } = setup();
    const create = createSession('sesn_d');
    await expect(processor.handle(deliver(create, 'session.sesn_other.cmd.CreateSession'))).rejects.toMatchObject({ code: 'VALIDATION_ERROR' });
  });

  it('never replies to a subject that is not an inbox', async () => {
    const { processor, replies, deliver } = setup();
    const create = createSession('sesn_e');
    await processor.handle(deliver(create, subjectOf(create), 'session.sesn_e.evt.SessionCreated'));
    expect(replies).toEqual([]);
  });
});

describe('EventOutbox marks', () => {
  it('marks what several sessions published in the same turn in one store write', async () => {
    const { store, processor, deliver } = setup();
    const creates = ['sesn_m1', 'sesn_m2', 'sesn_m3'].map((s) => createSession(s));
    await Promise.all(creates.map((c) => processor.handle(deliver(c, subjectOf(c)))));
    expect(await unpublished(store)).toEqual([]);
    expect(store.markWrites.flat().map((m) => m.sessionId).sort()).toEqual(['sesn_m1', 'sesn_m2', 'sesn_m3']);
    expect(store.markWrites).toHaveLength(1);
  });
});

describe('EventOutbox order after a failed publish', () => {
  it('sends the events whose publish failed before the next command\'s, so SESSION_EVT keeps the journal order', async () => {
    const { store, publisher, processor, deliver } = setup();
    const create = createSession('sesn_o');
    publisher.refused.add('sesn_o');
    await expect(processor.handle(deliver(create, subjectOf(create)))).rejects.toThrow(/MAX_PAYLOAD_EXCEEDED/);
    publisher.refused.clear();
    const message = submitMessage('sesn_o', 'after the failure');
    await processor.handle(deliver(message, subjectOf(message)));

    const seqs = publisher.published.map((p) => p.event.seq);
    expect(seqs).toEqual((await store.journal.readEvents('sesn_o')).map((e) => e.seq));
    expect(seqs.slice(0, 2)).toEqual([1, 2]);
    expect(await unpublished(store)).toEqual([]);
  });

  it('sends another replica\'s failed events before its own when the session moves to it', async () => {
    const a = setup();
    const b = setup(a.store, a.publisher);
    const create = createSession('sesn_x');
    a.publisher.refused.add('sesn_x');
    await expect(a.processor.handle(a.deliver(create, subjectOf(create)))).rejects.toThrow(/MAX_PAYLOAD_EXCEEDED/);
    a.publisher.refused.clear();
    const message = submitMessage('sesn_x', 'handled by the other kernel');
    await b.processor.handle(b.deliver(message, subjectOf(message)));

    const journal = (await a.store.journal.readEvents('sesn_x')).map((e) => e.seq);
    expect(journal.length).toBeGreaterThan(2);
    expect(a.publisher.published.map((p) => p.event.seq)).toEqual(journal);
    expect(await unpublished(a.store)).toEqual([]);
  });
});

describe('EventOutbox relay', () => {
  it('publishes what a crash left unpublished, in seq order, and marks it', async () => {
    const { store, publisher, outbox, kernel } = setup();
    // Commit without publishing: what the journal holds after a crash between commit and publish.
    await kernel.execute(createSession('sesn_r'));
    await kernel.execute(submitMessage('sesn_r', 'hello'));
    const committed = await store.journal.readEvents('sesn_r');

    expect(await outbox.relay()).toBe(committed.length);
    expect(publisher.published.map((p) => p.event)).toEqual(committed.map((e) => ({ ...e, public: toPublicEvent(e) })));
    expect(new Set(publisher.published.map((p) => p.subject.split('.')[3]))).toEqual(new Set(['owner_1']));
    expect(await unpublished(store)).toEqual([]);
    expect(await outbox.relay()).toBe(0);
  });

  it('publishes the other sessions when one cannot be published, and retries that one in order next pass', async () => {
    const { store, publisher, outbox, kernel, logged } = setup();
    for (const s of ['sesn_ok1', 'sesn_bad', 'sesn_ok2']) await kernel.execute(createSession(s));
    await kernel.execute(submitMessage('sesn_bad', 'later'));
    publisher.refused.add('sesn_bad');

    // Pages of two events: sesn_bad fails on the first page its events are on and is skipped after.
    const relayed = await outbox.relay(2);
    expect(relayed).toBe(4);
    expect(new Set(publisher.published.map((p) => p.event.session_id))).toEqual(new Set(['sesn_ok1', 'sesn_ok2']));
    expect(logged.lines.filter((l) => l.level === 'error')).toEqual([
      expect.objectContaining({ fields: { sessions: 1, failures: [{ session_id: 'sesn_bad', reason: expect.stringMatching(/MAX_PAYLOAD_EXCEEDED/) }] } }),
    ]);
    expect((await unpublished(store)).every((e) => e.session_id === 'sesn_bad')).toBe(true);

    publisher.refused.clear();
    await outbox.relay(2);
    const bad = publisher.published.filter((p) => p.event.session_id === 'sesn_bad').map((p) => p.event.seq);
    expect(bad).toEqual(bad.map((_, i) => i + 1));
    expect(bad.length).toBeGreaterThan(2);
    expect(await unpublished(store)).toEqual([]);
  });

  it('does not re-send events a command was publishing while the relay waited for their session', async () => {
    const { store, publisher, outbox, processor, deliver } = setup();
    let open: () => void = () => undefined;
    publisher.gate = new Promise((r) => (open = r));
    const create = createSession('sesn_q');
    const handled = processor.handle(deliver(create, subjectOf(create)));
    // Committed, publish held: the relay reads the events and queues behind the command's lock.
    while ((await unpublished(store, 10)).length === 0) await new Promise((r) => setImmediate(r));
    const relayed = outbox.relay();
    open();
    await handled;
    expect(await relayed).toBe(0);
    const ids = publisher.published.map((p) => p.msgId);
    expect(ids).toEqual(['sesn_q:1', 'sesn_q:2']);
  });
});
