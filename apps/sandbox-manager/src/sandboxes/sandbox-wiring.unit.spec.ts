import { Readable } from 'node:stream';
import type { Logger } from '@berth/ports';
import { recordingLogger, silentLogger } from '@berth/testing';
import { pack } from 'tar-stream';
import type { CommandData, CommandType, RecordedEvent, SessionCommand } from '@berth/contracts';
import { environmentConfigFrom } from '@berth/contracts';
import { commandFor, createSessionData } from '@berth/contracts/testing';
import { FixedClock } from '@berth/core/testing';
import { InMemoryManager } from '../testing/in-memory-manager';
import { LeaseSweeper } from '../watchers/lease-sweeper';
import { BoundSandboxes } from './bound-sandboxes';
import { JournalBindings } from './journal-bindings';

const command = <T extends CommandType>(sessionId: string, type: T, data: CommandData<T>): SessionCommand => commandFor(type, sessionId, data);
const create = (sessionId: string) => command(sessionId, 'CreateSession', createSessionData());
const bound = (events: readonly RecordedEvent[]) => events.find((e) => e.type === 'SandboxBound');
const quiet = silentLogger;
const sweeperOf = (manager: InMemoryManager, bound: BoundSandboxes, clock: FixedClock, log: Logger = quiet, turns: ConstructorParameters<typeof LeaseSweeper>[0]['turns'] = manager.turns) =>
  new LeaseSweeper({
    bound,
    turns,
    sandboxes: manager.sandboxes,
    send: manager.sendCommand,
    journal: manager.store.journal,
    view: (id) => manager.shell.view(id),
    bindings: new JournalBindings(manager.runtime, (id) => manager.shell.view(id), {}),
    runtime: manager.runtime,
    settings: manager.settings,
    scopeLabels: {},
    clock,
    log,
  });

describe('sandbox wiring (real kernel, in-memory runtime)', () => {
  it('keeps a warm pool for an environment in use and serves the next session from it, then refills', async () => {
    const manager = new InMemoryManager({ execScript: () => ({ lines: [], exitCode: 0 }), warmPoolSize: 1 });
    await manager.send(create('sesn_pool_a'));
    await manager.settled();
    await manager.pool.idle();
    expect(manager.pool.readyCount('env_1')).toBe(1);

    await manager.send(create('sesn_pool_b'));
    await manager.settled();
    expect(bound(await manager.events('sesn_pool_b'))?.data).toMatchObject({ sandbox_id: 'berth-s-sesn_pool_b-g1', warm: true });
    expect(await manager.runtime.inspect('berth-s-sesn_pool_b-g1')).toMatchObject({ running: true });
    await manager.pool.idle();
    expect(manager.pool.readyCount('env_1')).toBe(1);
  });

  it('an imported session’s first sandbox gets the archived workspace before it is bound, once (the blob is consumed)', async () => {
    const manager = new InMemoryManager({ execScript: () => ({ lines: [], exitCode: 0 }) });
    const workspace = pack();
    workspace.entry({ name: 'notes.txt', mode: 0o644, uid: 1000, gid: 1000 }, 'kept across installs\n');
    workspace.finalize();
    await manager.store.blobs.put('blob_import_ws', Readable.from(workspace));
    const origin = { session_id: 'sesn_src', agent: { id: 'agent_src', version: 1 }, environment_id: 'env_src', exported_at: '2026-12-02T04:00:00.000Z', journal_events: 3, harness_session_id: 'hs_1', files: [], workspace_blob: 'blob_import_ws', resources_not_carried: [] };
    await manager.send(command('sesn_imported', 'CreateSession', createSessionData({ import: origin })));
    await manager.settled();
    expect(bound(await manager.events('sesn_imported'))?.data).toMatchObject({ sandbox_id: 'berth-s-sesn_imported-g1' });
    expect((await manager.runtime.readFile('berth-s-sesn_imported-g1', '/workspace/notes.txt'))?.toString()).toBe('kept across installs\n');
    expect(await manager.store.blobs.get('blob_import_ws')).toBeNull();
    // A redelivered request finds nothing left to restore and binds the same container.
    const requested = (await manager.events('sesn_imported')).find((e) => e.type === 'SandboxRequested');
    if (requested?.type !== 'SandboxRequested') throw new Error('no SandboxRequested');
    await manager.redeliver(requested);
    expect((await manager.events('sesn_imported')).filter((e) => e.type === 'SandboxBound')).toHaveLength(1);
    // A session that is no import gets nothing put into its workspace.
    await manager.send(create('sesn_plain'));
    await manager.settled();
    expect(await manager.runtime.readFile('berth-s-sesn_plain-g1', '/workspace/notes.txt')).toBeNull();
  });

  it('waits for an engine that does not answer, and binds the sandbox once it answers again', async () => {
    const manager = new InMemoryManager({ execScript: () => ({ lines: [], exitCode: 0 }) });
    manager.runtime.down = true;
    await manager.send(create('sesn_engine_back'));
    while (manager.runtime.refused === 0) await new Promise((r) => setTimeout(r, 10));
    manager.runtime.down = false;
    await manager.settled();
    const types = (await manager.events('sesn_engine_back')).map((e) => e.type);
    expect(types).toContain('SandboxBound');
    expect(types).not.toContain('SandboxStartFailed');
  });

  it('fails the start, naming the engine, once it has not answered for the wait it is given', async () => {
    const manager = new InMemoryManager({ execScript: () => ({ lines: [], exitCode: 0 }), engineWaitMs: 1_500 });
    manager.runtime.down = true;
    await manager.send(create('sesn_engine_gone'));
    await manager.settled();
    const failed = (await manager.events('sesn_engine_gone')).find((e) => e.type === 'SandboxStartFailed');
    expect(failed?.data).toMatchObject({ message: expect.stringContaining('the in-memory engine is down') });
    // Tried again once after a second (the next pause, 2 s, would pass the 1.5 s wait), then gave up.
    expect(manager.runtime.refused).toBe(2);
  });

  it('a redelivered sandbox request binds the same container, never a second one', async () => {
    const manager = new InMemoryManager({ execScript: () => ({ lines: [], exitCode: 0 }) });
    await manager.send(create('sesn_twice'));
    await manager.settled();
    const requested = (await manager.events('sesn_twice')).find((e) => e.type === 'SandboxRequested');
    if (requested?.type !== 'SandboxRequested') throw new Error('no SandboxRequested');
    await manager.redeliver(requested);
    expect(manager.runtime.created).toBe(1);
    expect((await manager.events('sesn_twice')).filter((e) => e.type === 'SandboxBound')).toHaveLength(1);
  });

  it('reports an idle sandbox past its lease as expired and stops it; the session keeps going without a runtime', async () => {
    const manager = new InMemoryManager({ execScript: () => ({ lines: [], exitCode: 0 }) });
    await manager.send(create('sesn_lease'));
    await manager.settled();
    const clock = new FixedClock(new Date(Date.now() + 1_000));
    const leases = new BoundSandboxes(clock);
    leases.track({ sessionId: 'sesn_lease', generation: 1, sandboxId: 'berth-s-sesn_lease-g1', idle: { idleTimeoutSeconds: 60, maxLifetimeSeconds: null }, startedAt: clock.now() });
    const sweeper = sweeperOf(manager, leases, clock);

    clock.advance(59_000);
    expect(await sweeper.sweep()).toEqual([]);
    clock.advance(2_000);
    expect((await sweeper.sweep()).map((b) => b.sandboxId)).toEqual(['berth-s-sesn_lease-g1']);

    const lost = (await manager.events('sesn_lease')).find((e) => e.type === 'SandboxLost');
    expect(lost?.data).toMatchObject({ sandbox_id: 'berth-s-sesn_lease-g1', cause: 'expired' });
    expect(await manager.runtime.inspect('berth-s-sesn_lease-g1')).toBeNull();
  });

  it('never expires a sandbox while the journal shows a turn open on its session (run by another manager)', async () => {
    // The turn's harness never ends: it is "running on another manager" as far as this sweeper's own process can tell.
    const manager = new InMemoryManager({ execScript: ({ spec }) => (spec.cmd[3] === 'berth-turn' ? new Promise(() => undefined) : { lines: [], exitCode: 0 }) });
    await manager.send(create('sesn_busy'));
    await manager.settled();
    const clock = new FixedClock(new Date(Date.now() + 1_000));
    // This sweeper's own record of the sandbox has seen no activity since it was bound.
    const leases = new BoundSandboxes(clock);
    leases.track({ sessionId: 'sesn_busy', generation: 1, sandboxId: 'berth-s-sesn_busy-g1', idle: { idleTimeoutSeconds: 60, maxLifetimeSeconds: null }, startedAt: clock.now() });
    const sweeper = sweeperOf(manager, leases, clock, quiet, { get: () => undefined });
    await manager.send(command('sesn_busy', 'SubmitUserMessage', { turn_id: 'turn_busy', content: [{ type: 'text', text: 'work for a while' }] }));

    clock.advance(61_000);
    expect(await sweeper.sweep()).toEqual([]);
    clock.advance(600_000);
    expect(await sweeper.sweep()).toEqual([]);
    expect((await manager.events('sesn_busy')).some((e) => e.type === 'SandboxLost')).toBe(false);
    expect(await manager.runtime.inspect('berth-s-sesn_busy-g1')).toMatchObject({ running: true });
  });

  it('takes over the lease of a sandbox another manager bound, counting from the session\'s last activity; both managers expiring it is one loss and one release', async () => {
    const options = { execScript: () => ({ lines: [], exitCode: 0 }) };
    const binder = new InMemoryManager(options);
    const at = new Date().toISOString();
    const config = environmentConfigFrom({ type: 'cloud', idle_timeout_seconds: 60 });
    await binder.store.environments.put({ id: 'env_1', owner_id: 'owner_1', name: 'short', description: null, config, metadata: {}, created_at: at, updated_at: at, archived_at: null, deleted: false });
    await binder.send(create('sesn_other'));
    await binder.settled();
    // A second manager on the same store and engine, which did not bind it.
    const other = new InMemoryManager(options, binder);
    const [last] = await other.store.journal.readEvents('sesn_other', { order: 'desc', limit: 1 });
    const lastActivity = Date.parse(last?.occurred_at ?? '');
    // It takes it over half an idle timeout after the session's last event.
    const clock = new FixedClock(new Date(lastActivity + 30_000));
    const { log, lines } = recordingLogger();
    const sweeper = sweeperOf(other, new BoundSandboxes(clock), clock, log);
    expect(await sweeper.adoptUntracked()).toBe(1);
    expect(await sweeper.adoptUntracked()).toBe(0);

    clock.set(new Date(lastActivity + 59_000));
    expect(await sweeper.sweep()).toEqual([]);
    clock.advance(2_000);
    // The binder is alive and sweeps it at the same moment.
    const swept = await Promise.all([sweeper.sweep(), sweeperOf(binder, binder.bound, clock, log).sweep()]);
    expect(swept.map((expired) => expired.map((b) => b.sandboxId))).toEqual([['berth-s-sesn_other-g1'], ['berth-s-sesn_other-g1']]);
    await Promise.all([binder.settled(), other.settled()]);
    const lost = (await other.events('sesn_other')).filter((e) => e.type === 'SandboxLost');
    expect(lost.map((e) => e.data)).toEqual([{ sandbox_id: 'berth-s-sesn_other-g1', generation: 1, cause: 'expired' }]);
    expect(await other.runtime.inspect('berth-s-sesn_other-g1')).toBeNull();
    expect(lines.filter((l) => l.level === 'error' || l.level === 'warn')).toEqual([]);
  });

  it('starts an environment\'s sandboxes with its resources from one image built for its packages, and leases them for its idle timeout', async () => {
    const manager = new InMemoryManager({ execScript: () => ({ lines: [], exitCode: 0 }) });
    const at = new Date().toISOString();
    const config = environmentConfigFrom({ type: 'cloud', packages: { apt: ['jq'], npm: ['cowsay'] }, idle_timeout_seconds: 120, resources: { memory_mb: 512, cpus: 0.5, pids: 64 } });
    await manager.store.environments.put({ id: 'env_1', owner_id: 'owner_1', name: 'pkgs', description: null, config, metadata: {}, created_at: at, updated_at: at, archived_at: null, deleted: false });

    const before = Date.now();
    await manager.send(create('sesn_pkg_a'));
    await manager.send(create('sesn_pkg_b'));
    await manager.settled();

    expect(manager.images.built).toHaveLength(1);
    expect(manager.images.built[0]?.steps.map((s) => s[0])).toEqual(['/bin/sh', 'npm']);
    for (const session of ['sesn_pkg_a', 'sesn_pkg_b']) {
      expect(manager.runtime.specOf(`berth-s-${session}-g1`)).toMatchObject({ image: expect.stringMatching(/^berth\/env:/), memoryBytes: 512 * 1024 * 1024, nanoCpus: 500_000_000, pidsLimit: 64 });
      const lease = bound(await manager.events(session))?.data;
      const expires = Date.parse(lease && 'expires_at' in lease ? String(lease.expires_at) : '');
      expect(expires - before).toBeGreaterThanOrEqual(120_000);
      expect(expires - Date.now()).toBeLessThanOrEqual(120_000);
    }
  });
});
