import { Consumers, Streams, Subjects } from '@berth/contracts';
import { BerthError, ValidationError } from '@berth/core';
import { jetstream, jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import {
  applyTopology,
  berthTopology,
  ConsumerRunner,
  DeadLetterHeaders,
  JetStreamPublisher,
  type DeadLetter,
  type HandlerResult,
} from '@berth/nats';
import { silentLogger } from '../logging/test-loggers';
import { startNatsServer, type NatsServerHandle } from './nats-server';
import { waitUntil } from './wait-until';

jest.setTimeout(30_000);

type Behaviour = 'ack' | 'retry-once' | 'term' | 'throw-400' | 'throw-500' | 'throw-conflict-once';

describe('ConsumerRunner against a real nats-server', () => {
  let server: NatsServerHandle;
  let nc: NatsConnection;
  let jsm: JetStreamManager;
  let publisher: JetStreamPublisher;
  const MAX_DELIVER = 3;

  beforeAll(async () => {
    server = await startNatsServer();
    nc = await server.connect();
    jsm = await jetstreamManager(nc);
    await applyTopology(jsm, berthTopology({ tuning: { ackWaitMs: 2_000, maxDeliver: MAX_DELIVER } }));
    publisher = new JetStreamPublisher(jetstream(nc));
  });

  /** Nothing waiting and nothing in flight on the kernel consumer. */
  async function settled(): Promise<boolean> {
    const info = await jsm.consumers.info(Streams.commands, Consumers.kernel);
    return info.num_pending === 0 && info.num_ack_pending === 0;
  }

  afterAll(async () => {
    await nc?.close();
    await server?.stop();
  });

  it('maps handler results and thrown errors to ack, nak, term and dead-letter', async () => {
    const deliveries = new Map<string, number>();
    const deadLetters: DeadLetter[] = [];
    const handler = async (m: { subject: string; body: unknown; deliveryCount: number }): Promise<HandlerResult> => {
      const { behaviour } = m.body as { behaviour: Behaviour };
      deliveries.set(behaviour, m.deliveryCount);
      switch (behaviour) {
        case 'ack':
          return { type: 'ack' };
        case 'retry-once':
          return m.deliveryCount === 1 ? { type: 'retry', delayMs: 10 } : { type: 'ack' };
        case 'term':
          return { type: 'term', reason: 'not for this consumer' };
        case 'throw-400':
          throw new ValidationError('data.turn_id: Required', 'data.turn_id');
        case 'throw-conflict-once':
          if (m.deliveryCount === 1) throw new BerthError('CONCURRENCY_CONFLICT', 409, 'seq 3 taken');
          return { type: 'ack' };
        case 'throw-500':
          throw new Error('store unavailable');
      }
    };
    const runner = new ConsumerRunner({
      js: jetstream(nc),
      stream: Streams.commands,
      consumer: Consumers.kernel,
      handler,
      maxDeliver: MAX_DELIVER,
      publisher,
      concurrency: 4,
      retry: { baseDelayMs: 10, maxDelayMs: 50 },
      onDeadLetter: async (d) => {
        deadLetters.push(d);
      },
      log: silentLogger,
    });
    await runner.start();

    const behaviours: Behaviour[] = ['ack', 'retry-once', 'term', 'throw-400', 'throw-conflict-once', 'throw-500'];
    for (const [i, behaviour] of behaviours.entries()) {
      await publisher.publish(Subjects.command(`sesn_${i}`, 'InterruptTurn'), { behaviour }, { msgId: `m-${i}` });
    }
    await publisher.publish(Subjects.command('sesn_bad', 'InterruptTurn'), new TextEncoder().encode('{not json'));

    await waitUntil(async () => deadLetters.length === 3 && (await settled()), { what: 'all messages settled' });
    await runner.stop();

    expect(Object.fromEntries(deliveries)).toEqual({
      ack: 1,
      'retry-once': 2,
      term: 1,
      'throw-400': 1,
      'throw-conflict-once': 2,
      'throw-500': MAX_DELIVER,
    });
    expect(deadLetters.map((d) => [d.subject, d.deliveryCount]).sort()).toEqual([
      [Subjects.command('sesn_3', 'InterruptTurn'), 1],
      [Subjects.command('sesn_5', 'InterruptTurn'), MAX_DELIVER],
      [Subjects.command('sesn_bad', 'InterruptTurn'), 1],
    ]);
    const poison = await jsm.streams.getMessage(Streams.deadLetters, {
      last_by_subj: Subjects.deadLetter('sesn_5', 'cmd', 'InterruptTurn'),
    });
    expect(poison?.json()).toEqual({ behaviour: 'throw-500' });
    expect(poison?.header.get(DeadLetterHeaders.reason)).toContain('store unavailable');
    const invalid = await jsm.streams.getMessage(Streams.deadLetters, {
      last_by_subj: Subjects.deadLetter('sesn_3', 'cmd', 'InterruptTurn'),
    });
    expect(invalid?.header.get(DeadLetterHeaders.reason)).toContain('VALIDATION_ERROR');
  });

  it('dead-letters a poison message after max_deliver while the other messages keep flowing', async () => {
    const done: string[] = [];
    const runner = new ConsumerRunner({
      js: jetstream(nc),
      stream: Streams.commands,
      consumer: Consumers.kernel,
      maxDeliver: MAX_DELIVER,
      publisher,
      concurrency: 2,
      retry: { baseDelayMs: 200, maxDelayMs: 200 },
      log: silentLogger,
      handler: async (m) => {
        const { n } = m.body as { n: number };
        if (n === 0) throw new Error('always failing');
        done.push(String(n));
        return { type: 'ack' };
      },
    });
    await runner.start();
    for (let n = 0; n < 20; n++) await publisher.publish(Subjects.command(`sesn_f${n}`, 'InterruptTurn'), { n });
    await waitUntil(() => done.length === 19, { what: '19 healthy messages' });
    await waitUntil(settled, { what: 'poison settled' });
    await runner.stop();
    const poison = await jsm.streams.getMessage(Streams.deadLetters, {
      last_by_subj: Subjects.deadLetter('sesn_f0', 'cmd', 'InterruptTurn'),
    });
    expect(poison?.header.get(DeadLetterHeaders.deliveryCount)).toBe(String(MAX_DELIVER));
  });
});
