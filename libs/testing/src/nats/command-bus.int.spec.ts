import { commandFor } from '@berth/contracts/testing';
import { Consumers, Headers, Streams, type CommandOutcome, type SessionCommand } from '@berth/contracts';
import { BerthError } from '@berth/core';
import { applyTopology, berthTopology, ConsumerRunner, encodeJson, JetStreamPublisher, NatsCommandBus } from '@berth/nats';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import { silentLogger } from '../logging/test-loggers';
import { startNatsServer, type NatsServerHandle } from './nats-server';

jest.setTimeout(30_000);

const interrupt = (commandId: string): SessionCommand => commandFor('InterruptTurn', 'sesn_bus', {}, { command_id: commandId });

describe('NatsCommandBus', () => {
  let server: NatsServerHandle;
  let nc: NatsConnection;
  let bus: NatsCommandBus;

  beforeAll(async () => {
    server = await startNatsServer();
    nc = await server.connect();
    await applyTopology(await jetstreamManager(nc), berthTopology());
    bus = new NatsCommandBus(nc, new JetStreamPublisher(jetstream(nc)));
  });

  afterAll(async () => {
    bus?.close();
    await nc?.close();
    await server?.stop();
  });

  it('rejects with a TIMEOUT error naming the command when nobody answers', async () => {
    const error = await bus.send(interrupt('cmd_unanswered'), { timeoutMs: 200 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BerthError);
    expect(error).toMatchObject({ code: 'TIMEOUT', status: 504 });
    expect((error as Error).message).toContain('cmd_unanswered');
  });

  it('resolves with the outcome the consumer publishes to the reply header, also for a resend the broker deduplicated', async () => {
    const handled: string[] = [];
    const runner = new ConsumerRunner({
      log: silentLogger,
      js: jetstream(nc),
      stream: Streams.commands,
      consumer: Consumers.kernel,
      maxDeliver: 5,
      publisher: new JetStreamPublisher(jetstream(nc)),
      handler: async (m) => {
        const command = m.body as SessionCommand;
        const outcome: CommandOutcome = {
          ok: true,
          command_id: command.meta.command_id,
          session_id: command.meta.session_id,
          events: [],
          duplicate: handled.includes(command.meta.command_id),
          last_seq: 0,
        };
        handled.push(command.meta.command_id);
        nc.publish(m.headers[Headers.replyTo], encodeJson(outcome));
        return { type: 'ack' };
      },
    });
    await runner.start();
    try {
      expect(await bus.send(interrupt('cmd_answered'))).toMatchObject({ ok: true, command_id: 'cmd_answered', duplicate: false });
      expect(await bus.send(interrupt('cmd_answered'))).toMatchObject({ ok: true, command_id: 'cmd_answered', duplicate: true });
    } finally {
      await runner.stop();
    }
  });
});
