import Anthropic from '@anthropic-ai/sdk';
import { Headers, Streams } from '@berth/contracts';
import type { BerthStore } from '@berth/ports';
import { createStore } from '@berth/store';
import { AnthropicMessagesServer, reply, startNatsCluster, type NatsClusterHandle, type NatsClusterNode } from '@berth/testing';
import { jetstreamManager } from '@nats-io/jetstream';
import { e2eEnvironmentConfig, startE2ePlatform, waitFor, type E2ePlatform } from '../testing/e2e-platform';
import { listEvents, type PublicEvent } from '../testing/session-events';

/**
 * The platform on a three-node NATS cluster (loopback, the same operator-mode auth and
 * authenticated routes as the deploy files, every stream R3, `NATS_URL` listing all three): real
 * Claude Code turns on the default network, and the node leading `SESSION_EVT` is SIGKILLed while
 * they run. Every turn completes and nothing is lost or doubled: each session's public events are
 * exactly the turns' scripted outputs, once, in order, and `SESSION_EVT` holds every journaled event
 * of each session exactly once, in journal order, on the nodes that survived.
 */
const SESSIONS = 3;
const SLOW_PROMPT = 'Run the slow step';
const LATER_PROMPT = 'Are you still there?';
const TURN_TIMEOUT_MS = 180_000;

let cluster: NatsClusterHandle;
let models: AnthropicMessagesServer[];
let platform: E2ePlatform;
let client: Anthropic;
let store: BerthStore;

beforeAll(async () => {
  cluster = await startNatsCluster();
  models = await Promise.all(Array.from({ length: SESSIONS }, () => new AnthropicMessagesServer().start()));
  platform = await startE2ePlatform({
    modelBaseUrl: models[0].url,
    trustedModelEndpoints: models.map((m) => m.url),
    nats: cluster,
    env: { BERTH_NATS_STREAM_REPLICAS: '3' },
  });
  client = new Anthropic({ apiKey: platform.apiKey, baseURL: platform.gatewayUrl, maxRetries: 0 });
  store = createStore(platform.storeUrl);
  await store.init();
}, 600_000);
afterAll(async () => {
  await store?.close();
  await platform?.stop();
  await cluster?.stop();
  for (const m of models ?? []) await m.close();
}, 120_000);

/** Sends a user message as a careful client does while the broker fails over: the same request (one Idempotency-Key) again on a 5xx or a dropped connection. */
async function sendCarefully(sessionId: string, text: string): Promise<{ attempts: number; refusals: string[] }> {
  const key = `cluster-${sessionId}-${Date.now().toString(36)}`;
  const refusals: string[] = [];
  const deadline = Date.now() + 60_000;
  for (let attempts = 1; ; attempts++) {
    try {
      const res = await fetch(`${platform.gatewayUrl}/v1/sessions/${sessionId}/events`, {
        method: 'POST',
        headers: { 'x-api-key': platform.apiKey, 'content-type': 'application/json', 'idempotency-key': key },
        body: JSON.stringify({ events: [{ type: 'user.message', content: [{ type: 'text', text }] }] }),
        signal: AbortSignal.timeout(15_000),
      });
      if (res.ok) return { attempts, refusals };
      const body = await res.text();
      if (res.status < 500) throw new Error(`refused ${res.status}: ${body}`);
      refusals.push(`${res.status} ${body.slice(0, 200)}`);
    } catch (error) {
      if (error instanceof Error && error.message.startsWith('refused')) throw error;
      refusals.push(`no answer: ${String(error)}`);
    }
    if (Date.now() > deadline) throw new Error(`no attempt acknowledged in 60 s: ${refusals.join('; ')}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

const idleEnds = (events: PublicEvent[]) => events.filter((e) => e.type === 'session.status_idle' && (e['stop_reason'] as { type?: string } | undefined)?.type === 'end_turn').length;
const textOf = (e: PublicEvent) => ((e['content'] as { text?: string }[] | undefined) ?? []).map((c) => c.text ?? '').join('');

/** What a user reads of a session: its messages, tool calls and results, idles and errors, in order. */
function transcript(events: PublicEvent[]): string[] {
  return events.flatMap((e) => {
    switch (e.type) {
      case 'user.message':
        return [`user: ${textOf(e)}`];
      case 'agent.message':
        return [`agent: ${textOf(e)}`];
      case 'agent.tool_use':
        return [`tool_use: ${String(e['name'])}`];
      case 'agent.tool_result':
        return [`tool_result: ${JSON.stringify(e['content']).includes('step-done') ? 'step-done' : JSON.stringify(e['content'])}`];
      case 'session.status_idle':
        return [`idle: ${(e['stop_reason'] as { type?: string } | undefined)?.type}`];
      case 'session.error':
        return [`error: ${JSON.stringify(e)}`];
      default:
        return [];
    }
  });
}

/** Every message SESSION_EVT holds for a session, as the journal seqs of their `Nats-Msg-Id` (`<session>:<seq>`), in stream order (direct gets, message by message: no consumer needed). */
async function streamSeqs(sessionId: string): Promise<number[]> {
  const nc = await cluster.connect('admin', 'test-stream-reader');
  try {
    const jsm = await jetstreamManager(nc);
    const seqs: number[] = [];
    for (let from = 1; ; ) {
      const m = await jsm.direct.getMessage(Streams.events, { seq: from, next_by_subj: `session.${sessionId}.evt.>` });
      if (!m) return seqs;
      seqs.push(Number((m.header.get(Headers.msgId) ?? '').split(':').at(-1)));
      from = m.seq + 1;
    }
  } finally {
    await nc.close();
  }
}

it('runs the platform on three nodes with every Berth stream replicated on all of them', async () => {
  const nc = await cluster.connect('admin', 'test-stream-info');
  try {
    const jsm = await jetstreamManager(nc);
    for (const name of [Streams.commands, Streams.events, Streams.deadLetters]) {
      const info = await jsm.streams.info(name);
      expect(info.config.num_replicas).toBe(3);
      expect(info.cluster?.leader).toBeTruthy();
      expect(info.cluster?.replicas?.map((r) => r.name).concat(info.cluster.leader ?? '').sort()).toEqual(cluster.nodes.map((n) => n.name).sort());
    }
  } finally {
    await nc.close();
  }
}, 60_000);

it('loses no event and completes every turn when the node leading SESSION_EVT is SIGKILLed mid-turn', async () => {
  const agent = await client.beta.agents.create({
    name: 'cluster-worker',
    model: 'claude-sonnet-4-6',
    system: 'You run slow steps for the cluster test.',
    tools: [{ type: 'agent_toolset_20260401' }],
  });
  const sessions: string[] = [];
  for (const model of models) {
    model
      .scriptFor(SLOW_PROMPT, reply.toolCall('Bash', { command: 'sleep 4 && echo step-done', description: 'a slow step' }, { text: 'Running the slow step.' }), reply.text('The slow step is done.'))
      .setDefaultReply(reply.text('Still here.'));
    const environment = await client.beta.environments.create({ name: `cluster-${sessions.length}`, config: e2eEnvironmentConfig({ harness: 'claude-code', model: { base_url: model.url } }) });
    sessions.push((await client.beta.sessions.create({ agent: { type: 'agent', id: agent.id }, environment_id: environment.id })).id);
  }
  for (const id of sessions) await client.beta.sessions.events.send(id, { events: [{ type: 'user.message', content: [{ type: 'text', text: SLOW_PROMPT }] }] });

  // Mid-turn: the first session's slow step has started (its tool use is journaled and published).
  await waitFor('the first tool use', async () => (await listEvents(client, sessions[0])).some((e) => e.type === 'agent.tool_use'), TURN_TIMEOUT_MS, platform.logs);
  const leader = (await cluster.streamLeader(Streams.events)) as NatsClusterNode;
  expect(leader).not.toBeNull();
  await leader.crash();

  // While the cluster elects a new leader: the second turns are sent, as a careful client sends.
  const sends = await Promise.all(sessions.map((id) => sendCarefully(id, LATER_PROMPT)));
  const newLeader = await waitFor('a new SESSION_EVT leader', async () => (await cluster.streamLeader(Streams.events).catch(() => null)) ?? null, 60_000);
  expect(newLeader.name).not.toBe(leader.name);

  const finals = await Promise.all(
    sessions.map((id) => waitFor(`both turns of ${id} to end`, async () => {
      const events = await listEvents(client, id);
      return idleEnds(events) >= 2 ? events : null;
    }, TURN_TIMEOUT_MS, platform.logs)),
  );
  for (const events of finals) {
    const lines = transcript(events);
    // The second message was sent while the first turn ran (only the first session's tool use is
    // waited for, so in the others it may come before that turn's tool use): it is recorded once,
    // after the first message, and its turn runs after the first one ends (the order below).
    const later = `user: ${LATER_PROMPT}`;
    expect(lines.filter((l) => l === later)).toHaveLength(1);
    expect(lines.indexOf(later)).toBeGreaterThan(lines.indexOf(`user: ${SLOW_PROMPT}`));
    expect(lines.filter((l) => l !== later)).toEqual([
      `user: ${SLOW_PROMPT}`,
      'agent: Running the slow step.',
      'tool_use: bash',
      'tool_result: step-done',
      'agent: The slow step is done.',
      'idle: end_turn',
      'agent: Still here.',
      'idle: end_turn',
    ]);
    expect(new Set(events.map((e) => e.id)).size).toBe(events.length);
  }
  process.stdout.write(`nats cluster: killed ${leader.name} (SESSION_EVT leader), new leader ${newLeader.name}; second messages took ${sends.map((s) => s.attempts).join('/')} attempt(s)${sends.some((s) => s.refusals.length > 0) ? `, refused first with ${[...new Set(sends.flatMap((s) => s.refusals))].join(' | ')}` : ''}\n`);
  for (const id of sessions) {
    // The outbox publishes asynchronously: wait until the stream has caught up with the journal, then compare exactly.
    const journal = (await store.journal.readEvents(id, { limit: 100_000 })).map((e) => e.seq);
    const seqs = await waitFor(`SESSION_EVT to hold the ${journal.length} events of ${id}`, async () => {
      // A JetStream API request can time out while the cluster settles: asked again on the next poll.
      const s = await streamSeqs(id).catch(() => null);
      return s !== null && s.length >= journal.length ? s : null;
    }, 60_000);
    expect(seqs).toEqual(journal);
  }

  // The killed node comes back and catches up: the cluster is whole again.
  await leader.start();
  await cluster.healthy(60_000);
}, 600_000);
