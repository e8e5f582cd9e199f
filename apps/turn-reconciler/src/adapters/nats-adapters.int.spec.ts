import { SandboxManagerQueries, Streams, Subjects, type TurnProbeReply } from '@berth/contracts';
import { applyTopology, berthTopology, decodeJson, encodeJson, JetStreamPublisher } from '@berth/nats';
import { startNatsServer, type NatsServerHandle } from '@berth/testing';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import { JetStreamOpenTurnDirectory } from './jetstream-open-turn-directory';
import { SandboxManagerUnanswered } from '../reconciling/sandbox-manager.port';
import { NatsSandboxManagerClient } from './nats-sandbox-manager.client';

jest.setTimeout(30_000);

describe('turn-reconciler NATS adapters against a real nats-server', () => {
  let server: NatsServerHandle;
  let nc: NatsConnection;

  beforeAll(async () => {
    server = await startNatsServer();
    nc = await server.connect();
    await applyTopology(await jetstreamManager(nc), berthTopology());
  });

  afterAll(async () => {
    await nc?.close();
    await server?.stop();
  });

  describe('sandbox-manager client (request/reply)', () => {
    const client = () => new NatsSandboxManagerClient(nc, { probeTimeoutMs: 500, effectTimeoutMs: 500 });
    const request = { session_id: 'sesn_q', turn_id: 'turn_q', generation: 3 };

    it('sends the probe on the query subject and returns the parsed facts', async () => {
      const seen: unknown[] = [];
      const sub = nc.subscribe(Subjects.query('sandbox-manager', SandboxManagerQueries.probe), {
        callback: (_err, msg) => {
          seen.push(decodeJson(msg.data));
          const reply: TurnProbeReply = {
            ...request,
            facts: { sandbox: 'running', harness: { alive: true, attached: false }, input_delivered: true, output: { complete: false, last_offset: 4 } },
          };
          msg.respond(encodeJson(reply));
        },
      });
      try {
        const reply = await client().probe(request);
        expect(seen).toEqual([request]);
        expect(reply.facts.harness).toEqual({ alive: true, attached: false });
        expect(reply.facts.output).toEqual({ complete: false, last_offset: 4 });
      } finally {
        sub.unsubscribe();
      }
    });

    it('rejects, naming the field, when the reply does not match the contract', async () => {
      const sub = nc.subscribe(Subjects.query('sandbox-manager', SandboxManagerQueries.reattachTurn), {
        callback: (_err, msg) => {
          msg.respond(encodeJson({ outcome: 'maybe' }));
        },
      });
      try {
        await expect(client().reattach({ ...request, from_offset: 5 })).rejects.toThrow(/sandbox-manager reattach-turn reply\.outcome/);
      } finally {
        sub.unsubscribe();
      }
    });

    it('rejects promptly as unanswered when no sandbox-manager is listening', async () => {
      const started = Date.now();
      await expect(client().restoreTranscript({ ...request, transcript_bytes: 10 })).rejects.toBeInstanceOf(SandboxManagerUnanswered);
      expect(Date.now() - started).toBeLessThan(5_000);
    });

    it('rejects as unanswered when a sandbox-manager listens but does not answer in time', async () => {
      const sub = nc.subscribe(Subjects.query('sandbox-manager', SandboxManagerQueries.probe), { callback: () => undefined });
      try {
        await expect(client().probe(request)).rejects.toBeInstanceOf(SandboxManagerUnanswered);
      } finally {
        sub.unsubscribe();
      }
    });
  });

  describe('open-turn directory (SESSION_EVT subject index of TurnStarted)', () => {
    it('lists each session that started a turn once, and no other, also from events published before the owner token, with the reconciler’s own permissions', async () => {
      const publisher = new JetStreamPublisher(jetstream(nc));
      const publish = (session: string, type: 'TurnStarted' | 'AgentThinkingRecorded', n: number) =>
        publisher.publish(Subjects.event(session, 'owner_1', type), { type, session_id: session, seq: n }, { msgId: `${session}-${n}` });
      await publish('sesn_a', 'TurnStarted', 1);
      await publish('sesn_a', 'TurnStarted', 2);
      await publish('sesn_b', 'TurnStarted', 1);
      await publish('sesn_c', 'AgentThinkingRecorded', 1);
      await publisher.publish('session.sesn_old.evt.TurnStarted', { type: 'TurnStarted', session_id: 'sesn_old', seq: 1 }, { msgId: 'sesn_old-1' });

      const reconciler = await server.connect('turn-reconciler');
      try {
        const sessions = await new JetStreamOpenTurnDirectory(reconciler).sessionsWithTurns();
        expect([...sessions].sort()).toEqual(['sesn_a', 'sesn_b', 'sesn_old']);
      } finally {
        await reconciler.close();
      }
      const info = await (await jetstreamManager(nc)).streams.info(Streams.events);
      expect(info.state.messages).toBe(5);
    });
  });
});
