import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Headers, Streams, Subjects, type RecordedEvent } from '@berth/contracts';
import { commandFor } from '@berth/contracts/testing';
import { randomIds } from '@berth/core';
import { DeadLetterHeaders, inboxPrefixOf, JetStreamPublisher, NatsCommandBus } from '@berth/nats';
import type { BerthStore } from '@berth/ports';
import { createStore } from '@berth/store';
import { startNatsServer, waitUntil, type NatsServerHandle } from '@berth/testing';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { createInbox, type NatsConnection } from '@nats-io/nats-core';
import { eventMsgId } from './outbox/event-outbox';
import { createSession, submitMessage } from './testing/commands';
import { startKernelProcess, type KernelProcess } from './testing/kernel-process';
import { streamEventsOf } from './testing/stream-events';

jest.setTimeout(90_000);

const newSessionId = (): string => randomIds.next('sesn');
const seqs = (events: readonly Pick<RecordedEvent, 'seq'>[]): number[] => events.map((e) => e.seq);
const oneToN = (n: number): number[] => Array.from({ length: n }, (_, i) => i + 1);

describe('session-kernel service (real nats-server, SQLite, spawned process)', () => {
  let server: NatsServerHandle;
  let dir: string;
  let env: Record<string, string>;
  let nc: NatsConnection;
  let bus: NatsCommandBus;
  let store: BerthStore;
  const kernels: KernelProcess[] = [];

  const startKernel = async (extra: Record<string, string> = {}): Promise<KernelProcess> => {
    const kernel = await startKernelProcess({ ...env, ...extra });
    kernels.push(kernel);
    return kernel;
  };

  beforeAll(async () => {
    server = await startNatsServer();
    dir = mkdtempSync(join(tmpdir(), 'berth-kernel-'));
    env = {
      ...server.env('session-kernel'),
      BERTH_STORE_URL: `sqlite:${join(dir, 'berth.db')}`,
      BERTH_NATS_ACK_WAIT_MS: '3000',
      BERTH_NATS_MAX_DELIVER: '3',
      BERTH_RETRY_BASE_MS: '20',
    };
    await startKernel();
    nc = await server.connect();
    bus = new NatsCommandBus(nc, new JetStreamPublisher(jetstream(nc)), { defaultTimeoutMs: 15_000 });
    store = createStore(env.BERTH_STORE_URL);
    await store.init();
  });

  afterAll(async () => {
    await Promise.allSettled(kernels.map((k) => k.stop()));
    bus?.close();
    await nc?.close();
    await store?.close();
    await server?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('turns commands into journaled events that reach SESSION_EVT in seq order, and answers each sender', async () => {
    const sessionId = newSessionId();
    const created = await bus.send(createSession(sessionId));
    expect(created).toMatchObject({ ok: true, duplicate: false, session_id: sessionId });
    for (const text of ['first', 'second', 'third']) {
      expect(await bus.send(submitMessage(sessionId, text))).toMatchObject({ ok: true });
    }

    const journal = await store.journal.readEvents(sessionId);
    expect(seqs(journal)).toEqual(oneToN(journal.length));
    const published = await waitUntil(async () => {
      const events = await streamEventsOf(nc, sessionId);
      return events.length === journal.length && events;
    }, { what: 'every journaled event on the stream' });
    expect(published).toEqual(journal);
  });

  it('refuses a command the session state forbids with a coded outcome, adding no event', async () => {
    const sessionId = newSessionId();
    const outcome = await bus.send(submitMessage(sessionId, 'to a session that does not exist'));
    expect(outcome.ok).toBe(false);
    expect(outcome.ok === false && outcome.error.status).toBeGreaterThanOrEqual(400);
    expect(await store.journal.lastSeq(sessionId)).toBe(0);
  });

  it('treats a redelivered command (same command id, new broker message) as a no-op', async () => {
    const sessionId = newSessionId();
    await bus.send(createSession(sessionId));
    const message = submitMessage(sessionId, 'once only');
    const first = await bus.send(message);
    const lastSeq = await store.journal.lastSeq(sessionId);

    // Past the broker's dedupe window a redelivery arrives as a fresh message: the kernel must catch it.
    const inbox = createInbox(inboxPrefixOf(nc));
    const reply = new Promise<unknown>((resolve) => nc.subscribe(inbox, { max: 1, callback: (_e, m) => resolve(m.json()) }));
    await new JetStreamPublisher(jetstream(nc)).publish(Subjects.command(sessionId, message.type), message, {
      msgId: `${message.meta.command_id}-redelivered`,
      headers: { [Headers.replyTo]: inbox },
    });
    expect(await reply).toMatchObject({ ok: true, duplicate: true, events: first.ok ? first.events : [] });
    // A retried send inside the window is deduplicated by the broker and still answered.
    expect(await bus.send(message)).toMatchObject({ ok: true, duplicate: true });

    expect(await store.journal.lastSeq(sessionId)).toBe(lastSeq);
    const published = await streamEventsOf(nc, sessionId);
    expect(seqs(published)).toEqual(oneToN(lastSeq));
  });

  it('applies two concurrent writers on one session with gap-free sequences', async () => {
    const second = await startKernel();
    try {
      const sessionId = newSessionId();
      await bus.send(createSession(sessionId));
      const outcomes = await Promise.all(Array.from({ length: 24 }, (_, i) => bus.send(submitMessage(sessionId, `message ${i}`))));
      expect(outcomes.every((o) => o.ok)).toBe(true);

      const journal = await store.journal.readEvents(sessionId);
      expect(seqs(journal)).toEqual(oneToN(journal.length));
      const received = journal.filter((e) => e.type === 'UserMessageReceived');
      expect(received).toHaveLength(24);
      const published = await waitUntil(async () => {
        const events = await streamEventsOf(nc, sessionId);
        return events.length >= journal.length && events;
      }, { what: 'events on the stream' });
      expect(seqs(published).sort((a, b) => a - b)).toEqual(oneToN(journal.length));
    } finally {
      await second.stop();
    }
  });

  it('carries on after the broker restarts (same port, same store dir)', async () => {
    await server.restart();
    const sessionId = newSessionId();
    const command = createSession(sessionId);
    // Clients reconnect with jittered waits; the retried send is deduplicated by command id.
    const outcome = await waitUntil(() => bus.send(command, { timeoutMs: 2_000 }).catch(() => null), {
      timeoutMs: 30_000,
      what: 'a command answered after the restart',
    });
    expect(outcome).toMatchObject({ ok: true });
    const journal = await store.journal.readEvents(sessionId);
    const published = await waitUntil(async () => {
      const events = await streamEventsOf(nc, sessionId);
      return events.length === journal.length && events;
    }, { what: 'events on the stream after the restart' });
    expect(published).toEqual(journal);
  });

  it.each(['after-commit-before-publish', 'after-publish-before-mark', 'after-publish-before-ack'])(
    'publishes every committed event exactly once after a SIGKILL %s',
    async (crashPoint) => {
      const sessionId = newSessionId();
      await bus.send(createSession(sessionId));
      const committedBefore = await store.journal.lastSeq(sessionId);
      // Only the crashing kernel may consume while the command is in flight.
      await Promise.all(kernels.map((k) => k.stop()));
      const doomed = await startKernel({ BERTH_CRASH_POINT: crashPoint });
      await bus.dispatch(submitMessage(sessionId, `killed ${crashPoint}`));
      expect(await doomed.exited).toEqual({ code: null, signal: 'SIGKILL' });
      const journalAfterCrash = await store.journal.readEvents(sessionId);
      expect(journalAfterCrash.length).toBeGreaterThan(committedBefore);

      await startKernel();
      const published = await waitUntil(async () => {
        const events = await streamEventsOf(nc, sessionId);
        return events.length >= journalAfterCrash.length && events;
      }, { what: 'the committed events on the stream after restart' });
      // The redelivered command is a duplicate: the journal does not grow.
      await waitUntil(async () => (await jetstreamManager(nc)).consumers.info(Streams.commands, 'session-kernel').then((i) => i.num_ack_pending === 0 && i.num_pending === 0), { what: 'command acked' });
      expect(await store.journal.readEvents(sessionId)).toEqual(journalAfterCrash);
      expect(published.map(eventMsgId)).toEqual(journalAfterCrash.map(eventMsgId));
      expect((await store.journal.unpublished({ limit: 1000 })).events).toEqual([]);
    },
  );

  it('dead-letters a poison command, tells its session, and keeps serving other sessions', async () => {
    const poisoned = newSessionId();
    const healthy = newSessionId();
    await bus.send(createSession(poisoned));
    const publisher = new JetStreamPublisher(jetstream(nc));
    const bad = commandFor('SubmitUserMessage', poisoned, { turn_id: 'turn_x', content: [] });
    await publisher.publish(Subjects.command(poisoned, 'SubmitUserMessage'), bad);
    await publisher.publish(Subjects.command(poisoned, 'SubmitUserMessage'), new TextEncoder().encode('not json at all'));

    await bus.send(createSession(healthy));
    expect(await bus.send(submitMessage(healthy, 'still served'))).toMatchObject({ ok: true });

    const jsm = await jetstreamManager(nc);
    const dlq = await waitUntil(() =>
      jsm.streams.getMessage(Streams.deadLetters, { last_by_subj: Subjects.deadLetter(poisoned, 'cmd', 'SubmitUserMessage') }),
      { what: 'dead-letter copy' },
    );
    expect(dlq.header.get(DeadLetterHeaders.reason)).toMatch(/VALIDATION_ERROR/);
    const errors = await waitUntil(async () => {
      const raised = (await store.journal.readEvents(poisoned)).filter((e) => e.type === 'SessionErrorRaised');
      return raised.length === 2 && raised;
    }, { what: 'two session errors' });
    expect(errors.map((e) => e.type === 'SessionErrorRaised' && e.data.retry_status)).toEqual(['exhausted', 'exhausted']);
  });
});
