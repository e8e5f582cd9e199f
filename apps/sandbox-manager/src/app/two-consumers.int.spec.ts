import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CommandData, CommandType, RecordedEvent } from '@berth/contracts';
import { commandFor, createSessionData, testAgentConfig } from '@berth/contracts/testing';
import { systemClock } from '@berth/core';
import { JetStreamPublisher, NatsCommandBus } from '@berth/nats';
import { UnconfiguredSecretBox } from '@berth/secrets';
import { createStore } from '@berth/store';
import { InMemorySandboxImages, InMemorySandboxRuntime, InMemoryWorkspaces, silentLogger, startNatsServer, waitUntil, type NatsServerHandle } from '@berth/testing';
import { jetstream } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import { Registry } from 'prom-client';
import { ScriptedClaude } from '../testing/scripted-claude';
import { startService, type ServiceProcess } from '../testing/service-process';
import { startSandboxManager, type RunningSandboxManager } from './start-sandbox-manager';

const HELD = 64;
const quiet = silentLogger;

/**
 * The two durable consumers over a real nats-server and the real session-kernel process: 64 turns
 * hold every slot of the turns consumer (each waits on an `always_ask` tool confirmation), and an
 * interrupt still ends another session's turn at once. The harness here is ScriptedClaude in the
 * in-memory sandbox runtime, not the real CLI (64 real Claude Code processes do not fit on 2 cores);
 * it speaks Claude Code's stream-json control protocol and reads the turn's stdin file.
 */
describe('sandbox-manager with 64 turns held on tool confirmations (real NATS and kernel; ScriptedClaude in the in-memory runtime)', () => {
  let nats: NatsServerHandle;
  let kernel: ServiceProcess;
  let nc: NatsConnection;
  let gatewayNc: NatsConnection;
  let bus: NatsCommandBus;
  let manager: RunningSandboxManager;
  let dir: string;
  let store: ReturnType<typeof createStore>;
  const runtime: InMemorySandboxRuntime = new InMemorySandboxRuntime({ execScript: (input) => claude.script(input) });
  const claude: ScriptedClaude = new ScriptedClaude(() => runtime);

  const send = <T extends CommandType>(type: T, sessionId: string, data: CommandData<T>) => bus.send(commandFor(type, sessionId, data), { timeoutMs: 30_000 });
  const events = (sessionId: string): Promise<RecordedEvent[]> => store.journal.readEvents(sessionId);
  const has = async (sessionId: string, type: RecordedEvent['type']) => (await events(sessionId)).some((e) => e.type === type);

  beforeAll(async () => {
    nats = await startNatsServer();
    dir = mkdtempSync(join(tmpdir(), 'berth-two-consumers-'));
    const storeUrl = `sqlite:${join(dir, 'berth.db')}`;
    store = createStore(storeUrl);
    await store.init();
    // The agent the sessions pin: every tool asks.
    const at = new Date().toISOString();
    const agent = testAgentConfig({ tools: [{ type: 'agent_toolset_20260401', default_config: { permission_policy: { type: 'always_ask' } } }] });
    await store.agents.putVersion({ id: 'agent_1', owner_id: 'owner_1', version: 1, name: 'held', config: agent, created_at: at, updated_at: at, archived_at: null }, 0);
    kernel = await startService('session-kernel', { ...nats.env('session-kernel'), BERTH_STORE_URL: storeUrl, BERTH_OUTBOX_RELAY_MS: '200' });
    // Each side as its own NATS user: the manager's, and the gateway's for the commands a user sends.
    nc = await nats.connect('sandbox-manager');
    gatewayNc = await nats.connect('gateway');
    bus = new NatsCommandBus(gatewayNc, new JetStreamPublisher(jetstream(gatewayNc)), { defaultTimeoutMs: 30_000 });
    manager = await startSandboxManager({
      nc,
      store,
      runtime,
      box: new UnconfiguredSecretBox(),
      egressSocketOf: async () => null,
      workspaces: new InMemoryWorkspaces(),
      clock: systemClock,
      log: quiet,
      images: new InMemorySandboxImages(),
      sandboxImage: 'berth/harness:latest',
      scopeLabels: {},
      delivery: { ackWaitMs: 30_000, maxDeliver: 5, concurrency: HELD, controlConcurrency: 32 },
      leaseSweepMs: 60_000,
      poolSweepMs: 60_000,
      policy: { interruptDeadlineMs: 1_500 },
      registry: new Registry(),
      egressSockets: false,
    });
  }, 120_000);
  afterAll(async () => {
    await manager?.stop();
    bus?.close();
    await nc?.close();
    await gatewayNc?.close();
    await kernel?.stop();
    await store?.close();
    await nats?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('interrupts a turn waiting behind 64 held turns within 2 s, never runs it, and the held turns still finish', async () => {
    const held = Array.from({ length: HELD }, (_, i) => `sesn_held_${i}`);
    for (const id of held) await send('CreateSession', id, createSessionData({ permission_mode: 'always_ask' }));
    for (const id of held) await send('SubmitUserMessage', id, { turn_id: `turn_${id}`, content: [{ type: 'text', text: 'run echo' }] });
    await waitUntil(async () => (await Promise.all(held.map((id) => has(id, 'TurnAwaitingConfirmation')))).every(Boolean), {
      timeoutMs: 120_000,
      intervalMs: 200,
      what: 'all 64 turns to wait for a tool confirmation',
    });
    expect(manager.turns.all()).toHaveLength(HELD);

    // A 65th turn: every slot of the turns consumer is taken, so its TurnStarted waits at the cap.
    const other = 'sesn_other';
    await send('CreateSession', other, createSessionData({ permission_mode: 'always_ask' }));
    await waitUntil(() => has(other, 'SandboxBound'), { timeoutMs: 30_000, what: 'its sandbox to be bound (control consumer)' });
    await send('SubmitUserMessage', other, { turn_id: 'turn_other', content: [{ type: 'text', text: 'run echo' }] });
    expect(claude.started).not.toContain('turn_other');

    const interruptedAt = Date.now();
    await send('InterruptTurn', other, {});
    const completed = await waitUntil(async () => (await events(other)).find((e) => e.type === 'TurnCompleted'), { timeoutMs: 10_000, what: 'the interrupted turn to end' });
    expect(Date.now() - interruptedAt).toBeLessThan(2_000);
    expect(completed.data).toMatchObject({ turn_id: 'turn_other', interrupted: true });

    // One held turn interrupted (its harness reads the interrupt line), one allowed: both end, each within 2 s.
    const t0 = Date.now();
    await send('InterruptTurn', held[0], {});
    await waitUntil(() => has(held[0], 'TurnCompleted'), { timeoutMs: 10_000, what: 'the held, interrupted turn to end' });
    expect(Date.now() - t0).toBeLessThan(2_000);
    expect((await events(held[0])).find((e) => e.type === 'TurnCompleted')?.data).toMatchObject({ interrupted: true });

    const answer = async (id: string) => {
      const ask = (await events(id)).find((e) => e.type === 'AgentToolUseRecorded');
      await send('ConfirmToolUse', id, { tool_use_id: ask?.id ?? '', result: 'allow', deny_message: null });
    };
    const t1 = Date.now();
    await answer(held[1]);
    await waitUntil(() => has(held[1], 'TurnCompleted'), { timeoutMs: 10_000, what: 'the allowed turn to end' });
    expect(Date.now() - t1).toBeLessThan(2_000);
    expect((await events(held[1])).map((e) => e.type)).toEqual(expect.arrayContaining(['AgentToolResultRecorded', 'AgentMessageRecorded', 'TurnCompleted']));

    for (const id of held.slice(2)) await answer(id);
    await waitUntil(async () => (await Promise.all(held.map((id) => has(id, 'TurnCompleted')))).every(Boolean), { timeoutMs: 60_000, intervalMs: 200, what: 'every held turn to end' });
    // The interrupted 65th turn's delivery got a slot in the end: it never started a harness.
    await waitUntil(() => manager.turns.all().length === 0, { timeoutMs: 30_000, what: 'no turn left running' });
    expect(claude.started).not.toContain('turn_other');
    expect((await events(other)).filter((e) => e.type === 'TurnCompleted')).toHaveLength(1);
  }, 300_000);
});
