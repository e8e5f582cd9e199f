import { Consumers, parseCommand, SandboxManagerQueries, Streams, Subjects, type CommandData, type CommandType, type RecordedEvent, type TurnProbeFacts } from '@berth/contracts';
import { commandFor, createSessionData } from '@berth/contracts/testing';
import { systemClock } from '@berth/core';
import { applyTopology, berthTopology, ConsumerRunner, decodeJson, encodeJson, HandlerResults, JetStreamPublisher, NatsCommandBus } from '@berth/nats';
import { createJetStreamMicroservice, JetStreamTransport } from '@berth/nest';
import type { BerthStore } from '@berth/ports';
import { createStore } from '@berth/store';
import { silentLogger, startNatsServer, waitUntil, type NatsServerHandle } from '@berth/testing';
import { reconcilerMetrics } from '@berth/telemetry';
import { defaultReconcilePolicy } from '@berth/turns-domain';
import { Registry } from 'prom-client';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection, Subscription } from '@nats-io/nats-core';
import type { INestMicroservice } from '@nestjs/common';
import { JetStreamOpenTurnDirectory } from './adapters/jetstream-open-turn-directory';
import { NatsSandboxManagerClient } from './adapters/nats-sandbox-manager.client';
import { ReconcilerModule } from './reconciler.module';
import { TurnReconcilerService } from './reconciling/turn-reconciler.service';
import { FakeKernel } from './testing/fake-kernel';

jest.setTimeout(30_000);

const SESSION = 'sesn_int';

/**
 * The reconciler as deployed — Nest JetStream consumer on SESSION_EVT, NATS command bus, NATS
 * request/reply to the sandbox-manager, SQLite store — against a real nats-server. A fake kernel
 * (the real session decider) consumes SESSION_CMD and publishes what it commits to SESSION_EVT;
 * the test answers the sandbox-manager's queries.
 */
describe('turn-reconciler over a real nats-server and SQLite', () => {
  let server: NatsServerHandle;
  let nc: NatsConnection;
  let store: BerthStore;
  let kernel: FakeKernel;
  let kernelRunner: ConsumerRunner;
  let reconciler: TurnReconcilerService;
  let app: INestMicroservice;
  let responders: Subscription[] = [];
  const queries: string[] = [];
  let facts: TurnProbeFacts;
  let n = 0;

  const send = <T extends CommandType>(type: T, data: CommandData<T>) =>
    kernel.send(commandFor(type, SESSION, data, { command_id: `cmd_i${++n}` }));
  const journal = () => store.journal.readEvents(SESSION);
  const terminal = (events: readonly RecordedEvent[]) =>
    events.find((e) => e.type === 'TurnRecovered' || e.type === 'TurnFailed' || (e.type === 'TurnCompleted' && e.data.turn_id === 'turn_1'));

  beforeAll(async () => {
    server = await startNatsServer();
    nc = await server.connect();
    const topology = berthTopology({ tuning: { ackWaitMs: 2_000, maxDeliver: 3 } });
    await applyTopology(await jetstreamManager(nc), topology);
    const js = jetstream(nc);
    const publisher = new JetStreamPublisher(js);

    store = createStore('sqlite::memory:');
    await store.init();
    kernel = new FakeKernel(store.journal, systemClock);
    kernel.subscribe(async (e) => {
      await publisher.publish(Subjects.event(e.session_id, 'owner_1', e.type), e, { msgId: `${e.session_id}:${e.seq}` });
    });
    kernelRunner = new ConsumerRunner({
      log: silentLogger,
      js,
      stream: Streams.commands,
      consumer: Consumers.kernel,
      maxDeliver: 3,
      concurrency: 1,
      publisher,
      handler: async (m) => {
        await kernel.send(parseCommand(m.body));
        return HandlerResults.ack();
      },
    });
    await kernelRunner.start();

    const answer = (name: string, reply: (request: Record<string, unknown>) => unknown) =>
      nc.subscribe(Subjects.query('sandbox-manager', name), {
        callback: (_err, msg) => {
          const request = decodeJson(msg.data) as Record<string, unknown>;
          queries.push(name);
          msg.respond(encodeJson(reply(request)));
        },
      });
    responders = [
      answer(SandboxManagerQueries.probe, (r) => ({ session_id: r.session_id, turn_id: r.turn_id, generation: r.generation, facts })),
      answer(SandboxManagerQueries.restoreTranscript, () => ({ outcome: 'done', message: '' })),
    ];

    await startReconciler();
  });

  /** Starts the reconciler the way main.ts does: rebuild from the journal, consume, sweep. */
  async function startReconciler(): Promise<void> {
    reconciler = new TurnReconcilerService({
      journal: store.journal,
      transcripts: store.transcripts,
      commands: new NatsCommandBus(nc, new JetStreamPublisher(jetstream(nc))),
      sandboxManager: new NatsSandboxManagerClient(nc, { probeTimeoutMs: 500, effectTimeoutMs: 1_000 }),
      clock: systemClock,
      policy: { ...defaultReconcilePolicy, probeAfterMs: 300, retryAfterMs: 100, pendingTimeoutMs: 1_500 },
      log: silentLogger,
      metrics: reconcilerMetrics(new Registry()),
    });
    await reconciler.hydrate(new JetStreamOpenTurnDirectory(nc));
    const transport = new JetStreamTransport({ connection: nc, stream: Streams.events, consumer: Consumers.turnReconciler, maxDeliver: 3, log: silentLogger });
    app = await createJetStreamMicroservice(ReconcilerModule.forRoot(reconciler), transport, silentLogger);
    app.useLogger(false);
    await app.listen();
    reconciler.startSweeping(100);
  }

  async function stopReconciler(): Promise<void> {
    await app.close();
    await reconciler.stop();
  }

  afterAll(async () => {
    await app?.close();
    await reconciler?.stop();
    await kernelRunner?.stop();
    for (const r of responders) r.unsubscribe();
    await nc?.close();
    await store?.close();
    await server?.stop();
  });

  it('a sandbox killed mid-turn ends recovered from the transcript mirror, within a second or two', async () => {
    await send('CreateSession', createSessionData());
    await send('BindSandbox', { sandbox_id: 'sbx_1', generation: 1, expires_at: null, warm: true });
    await send('SubmitUserMessage', { turn_id: 'turn_1', content: [{ type: 'text', text: 'hello' }] });
    await send('RecordAgentOutput', { turn_id: 'turn_1', generation: 1, offset: 0, outputs: [{ kind: 'thinking' }], harness_session_id: 'h-1' });
    await store.transcripts.append({ session_id: SESSION, path: 'h-1.jsonl', offset: 0, data: '{"type":"user"}\n' });
    await waitUntil(() => reconciler.openTurns().length === 1, { what: 'the reconciler to track the turn' });

    facts = { sandbox: 'missing', harness: { alive: false, attached: false }, input_delivered: true, output: null };
    const killedAt = Date.now();
    await send('ReportSandboxDied', { sandbox_id: 'sbx_1', generation: 1, cause: 'die', exit_code: 137 });

    const end = await waitUntil(async () => terminal(await journal()), { timeoutMs: 10_000, what: 'the turn to settle' });
    const convergedMs = Date.now() - killedAt;
    process.stdout.write(`sandbox killed mid-turn → ${end.type} in ${convergedMs} ms\n`);

    expect(end).toMatchObject({ type: 'TurnRecovered', data: { turn_id: 'turn_1', method: 'transcript_recovered' } });
    expect(queries).toEqual(['probe', 'restore-transcript']);
    expect(convergedMs).toBeLessThan(10_000);
    const types = (await journal()).map((e) => e.type);
    expect(types.slice(-4)).toEqual(['SandboxLost', 'TurnTranscriptPending', 'TurnRecovered', 'TurnCompleted']);
    await waitUntil(() => reconciler.openTurns().length === 0, { what: 'the reconciler to forget the settled turn' });
  });

  it('a reconciler that was down while the sandbox died rebuilds the open turn on start and settles it', async () => {
    await send('SubmitUserMessage', { turn_id: 'turn_2', content: [{ type: 'text', text: 'again' }] });
    await send('BindSandbox', { sandbox_id: 'sbx_2', generation: 2, expires_at: null, warm: false });
    await send('RecordAgentOutput', { turn_id: 'turn_2', generation: 2, offset: 0, outputs: [{ kind: 'thinking' }], harness_session_id: null });
    await waitUntil(() => reconciler.openTurns().some((t) => t.turn_id === 'turn_2'), { what: 'turn 2 to be tracked' });
    await stopReconciler();

    facts = { sandbox: 'missing', harness: { alive: false, attached: false }, input_delivered: true, output: null };
    queries.length = 0;
    await send('ReportSandboxDied', { sandbox_id: 'sbx_2', generation: 2, cause: 'oom', exit_code: 137 });
    await store.transcripts.append({ session_id: SESSION, path: 'h-1.jsonl', offset: 16, data: '{"type":"assistant"}\n' });

    const restartedAt = Date.now();
    await startReconciler();
    const end = await waitUntil(
      async () => (await journal()).find((e) => (e.type === 'TurnRecovered' || e.type === 'TurnFailed') && e.data.turn_id === 'turn_2'),
      { timeoutMs: 10_000, what: 'turn 2 to settle' },
    );
    process.stdout.write(`reconciler restarted → turn 2 ${end.type} ${Date.now() - restartedAt} ms after start\n`);
    expect(end).toMatchObject({ type: 'TurnRecovered', data: { method: 'transcript_recovered' } });
    expect(queries).toEqual(['probe', 'restore-transcript']);
  });
});
