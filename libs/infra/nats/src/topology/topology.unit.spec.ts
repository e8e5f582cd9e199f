import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Consumers, Streams } from '@berth/contracts';
import { topologyDeployFiles } from './deploy-files';
import { berthTopology, consumerDeclaration, ownerEventStream } from './topology';

const DEPLOY_DIR = join(__dirname, '..', '..', '..', '..', '..', 'deploy', 'nats');

describe('berthTopology', () => {
  it('bounds redelivery of every consumer (a poison message can never loop forever)', () => {
    for (const c of berthTopology().consumers) {
      expect(c.config.max_deliver).toBeGreaterThan(0);
      // nats-server requires max_deliver > backoff length.
      expect(c.config.backoff.length).toBeLessThan(c.config.max_deliver);
      expect(c.config.ack_policy).toBe('explicit');
    }
  });

  it('declares the command stream as a work queue that deduplicates retried publishes for 2 minutes', () => {
    const cmd = berthTopology().streams.find((s) => s.name === Streams.commands);
    expect(cmd).toMatchObject({ retention: 'workqueue', subjects: ['session.*.cmd.>'], duplicate_window: 120e9 });
  });

  it('narrows a reactor consumer to the event subjects it is configured with', () => {
    const topology = berthTopology({ filters: { sandboxManagerControl: ['session.*.evt.SandboxRequested', 'session.*.evt.SessionTerminated'] } });
    expect(consumerDeclaration(topology, Consumers.sandboxManagerControl).config.filter_subjects).toEqual([
      'session.*.evt.SandboxRequested',
      'session.*.evt.SessionTerminated',
    ]);
    expect(consumerDeclaration(topology, Consumers.turnReconciler).config.filter_subject).toBe('session.*.evt.>');
  });

  it('gives the sandbox-manager a consumer of its own for turns, so control events never wait behind running turns', () => {
    const topology = berthTopology();
    expect(consumerDeclaration(topology, Consumers.sandboxManagerTurns).config.filter_subject).toBe('session.*.evt.*.TurnStarted');
    expect(consumerDeclaration(topology, Consumers.sandboxManagerControl).config.filter_subject).toBe('session.*.evt.>');
  });

  it('declares every stream with one copy by default (a single nats-server) and with the replicas asked for on a cluster', () => {
    expect(berthTopology().streams.map((s) => s.num_replicas)).toEqual([1, 1, 1]);
    expect(berthTopology({ replicas: 3 }).streams.map((s) => [s.name, s.num_replicas])).toEqual([
      [Streams.commands, 3],
      [Streams.events, 3],
      [Streams.deadLetters, 3],
    ]);
    // Consumers carry no replica count of their own: nats-server gives them their stream's.
    expect(berthTopology({ replicas: 3 }).consumers.every((c) => !('num_replicas' in c.config))).toBe(true);
    expect(ownerEventStream('acme', 'berth.api', 3).num_replicas).toBe(3);
  });

  // Regenerate with BERTH_WRITE_DEPLOY=1 after changing the declarations.
  it('matches the files in deploy/nats', () => {
    const files = topologyDeployFiles(berthTopology());
    if (process.env.BERTH_WRITE_DEPLOY === '1') {
      for (const [name, text] of Object.entries(files)) writeFileSync(join(DEPLOY_DIR, name), text);
    }
    const onDisk = Object.fromEntries(
      readdirSync(DEPLOY_DIR)
        .filter((f) => f.endsWith('.json'))
        .map((f) => [f, readFileSync(join(DEPLOY_DIR, f), 'utf8')]),
    );
    expect(onDisk).toEqual(files);
  });
});
