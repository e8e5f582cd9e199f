import { Consumers, Streams, Subjects } from '@berth/contracts';
import { ValidationError } from '@berth/core';
import { applyTopology, berthTopology, JetStreamPublisher, type DeadLetter, type HandlerResult } from '@berth/nats';
import { createJetStreamMicroservice, JetStreamTransport, type JetStreamContext } from '@berth/nest';
import { jetstream, jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import { Controller, Module, type INestMicroservice } from '@nestjs/common';
import { Ctx, EventPattern, Payload } from '@nestjs/microservices';
import { silentLogger } from '../logging/test-loggers';
import { startNatsServer, type NatsServerHandle } from './nats-server';
import { waitUntil } from './wait-until';

jest.setTimeout(30_000);

const seen: { subject: string; deliveryCount: number }[] = [];

@Controller()
class ProbeController {
  @EventPattern<string>('InterruptTurn')
  interrupt(@Payload() body: { then: string }, @Ctx() ctx: JetStreamContext): HandlerResult | undefined {
    seen.push({ subject: ctx.message.subject, deliveryCount: ctx.message.deliveryCount });
    if (body.then === 'retry-once' && ctx.message.deliveryCount === 1) return { type: 'retry', delayMs: 10 };
    if (body.then === 'reject') throw new ValidationError('data.reason: too long', 'data.reason');
    return undefined;
  }

  @EventPattern<string>('TerminateSession')
  async terminate(): Promise<HandlerResult> {
    throw new Error('docker daemon unreachable');
  }
}

@Module({ controllers: [ProbeController] })
class ProbeModule {}

describe('JetStreamTransport (Nest @EventPattern handlers over a real JetStream consumer)', () => {
  let server: NatsServerHandle;
  let nc: NatsConnection;
  let jsm: JetStreamManager;
  let app: INestMicroservice;
  const deadLetters: DeadLetter[] = [];

  beforeAll(async () => {
    server = await startNatsServer();
    nc = await server.connect();
    jsm = await jetstreamManager(nc);
    await applyTopology(jsm, berthTopology({ tuning: { ackWaitMs: 2_000, maxDeliver: 3 } }));
    const transport = new JetStreamTransport({
      log: silentLogger,
      connection: nc,
      stream: Streams.commands,
      consumer: Consumers.kernel,
      maxDeliver: 3,
      retry: { baseDelayMs: 10, maxDelayMs: 20 },
      unhandled: 'dead-letter',
      onDeadLetter: async (d) => {
        deadLetters.push(d);
      },
    });
    app = await createJetStreamMicroservice(ProbeModule, transport, silentLogger);
    await app.listen();
  });

  afterAll(async () => {
    await app?.close();
    await nc?.close();
    await server?.stop();
  });

  it('acks on a plain return, naks on a retry result, dead-letters thrown bad input at once and other errors after max_deliver', async () => {
    const publisher = new JetStreamPublisher(jetstream(nc));
    await publisher.publish(Subjects.command('sesn_ok', 'InterruptTurn'), { then: 'ack' });
    await publisher.publish(Subjects.command('sesn_retry', 'InterruptTurn'), { then: 'retry-once' });
    await publisher.publish(Subjects.command('sesn_bad', 'InterruptTurn'), { then: 'reject' });
    await publisher.publish(Subjects.command('sesn_down', 'TerminateSession'), {});
    await publisher.publish(Subjects.command('sesn_unknown', 'ArchiveSession'), {});

    await waitUntil(async () => {
      const info = await jsm.consumers.info(Streams.commands, Consumers.kernel);
      return deadLetters.length === 3 && info.num_pending === 0 && info.num_ack_pending === 0;
    }, { what: 'every message settled' });

    const deliveries = (s: string) => seen.filter((x) => x.subject === Subjects.command(s, 'InterruptTurn')).map((x) => x.deliveryCount);
    expect(deliveries('sesn_ok')).toEqual([1]);
    expect(deliveries('sesn_retry')).toEqual([1, 2]);
    expect(deliveries('sesn_bad')).toEqual([1]);
    expect(Object.fromEntries(deadLetters.map((d) => [d.subject, [d.deliveryCount, d.reason.split(':')[0]]]))).toEqual({
      [Subjects.command('sesn_bad', 'InterruptTurn')]: [1, 'VALIDATION_ERROR'],
      [Subjects.command('sesn_down', 'TerminateSession')]: [3, 'gave up after 3 deliveries'],
      [Subjects.command('sesn_unknown', 'ArchiveSession')]: [1, 'VALIDATION_ERROR'],
    });
  });
});
