import Anthropic from '@anthropic-ai/sdk';
import { AnthropicMessagesServer, reply } from '@berth/testing';
import { startE2ePlatform, waitFor, type E2ePlatform } from '../testing/e2e-platform';
import { listEvents } from '../testing/session-events';

/**
 * Explicit recovery (`POST /v1/sessions/{id}/recover`) through the whole platform: the gateway
 * asks the real sandbox-manager about the real container, the kernel decides, the manager acts.
 * One session walks through a live sandbox (reattached), a killed one (startup-requested) and a
 * terminated session (recreated), then runs a turn with claude-code in the recreated sandbox.
 */
type Binding = { sandbox_id: string; generation: number };
type SessionBody = { status: string; berth: { lifecycle: string; paused?: boolean; runtime_unavailable: boolean; sandbox: Binding | null; recover?: { outcome: string; reason: string | null; already_requested: boolean } } };

const STEP_TIMEOUT_MS = 60_000;

describe('explicit recover against the real sandbox-manager', () => {
  let model: AnthropicMessagesServer;
  let platform: E2ePlatform;
  let client: Anthropic;

  beforeAll(async () => {
    model = await new AnthropicMessagesServer().start();
    platform = await startE2ePlatform({ modelBaseUrl: model.url });
    client = new Anthropic({ apiKey: platform.apiKey, baseURL: platform.gatewayUrl, maxRetries: 0 });
  }, 600_000);
  afterAll(async () => {
    await platform?.stop();
    await model?.close();
  }, 60_000);

  const post = async (sessionId: string, action: 'recover' | 'terminate' | 'pause' | 'resume'): Promise<SessionBody> => {
    const response = await fetch(`${platform.gatewayUrl}/v1/sessions/${sessionId}/${action}`, { method: 'POST', headers: { 'x-api-key': platform.apiKey } });
    const body = (await response.json()) as SessionBody;
    if (response.status !== 200) throw new Error(`${action} answered ${response.status}: ${JSON.stringify(body)}`);
    return body;
  };
  const session = async (sessionId: string) => (await client.beta.sessions.retrieve(sessionId)) as unknown as SessionBody;
  const events = (sessionId: string) => listEvents(client, sessionId);
  const boundAt = (sessionId: string, generation: number) =>
    waitFor(`a sandbox bound at generation ${generation}`, async () => {
      const bound = (await events(sessionId)).filter((e) => e.type === 'berth.sandbox_bound' && e['generation'] === generation);
      return bound.length > 0 && (await session(sessionId)).berth.sandbox?.generation === generation ? bound : null;
    }, STEP_TIMEOUT_MS, platform.logs);

  it(
    'reattaches a live sandbox, starts a new one for a killed one, recreates a terminated session that then runs a turn',
    async () => {
      const agent = await client.beta.agents.create({ name: 'recover-agent', model: 'claude-sonnet-4-5' });
      const env = await client.beta.environments.create({
        name: 'recover-env',
        config: { type: 'cloud', harness: 'claude-code' } as Anthropic.Beta.Environments.BetaCloudConfigParams,
      });
      const { id } = await client.beta.sessions.create({ agent: agent.id, environment_id: env.id });
      await boundAt(id, 1);
      const live = (await session(id)).berth.sandbox;

      // (a) A live sandbox: the manager finds it running, the kernel keeps it.
      const reattached = await post(id, 'recover');
      expect(reattached.berth.recover).toEqual({ outcome: 'reattached', reason: null, already_requested: false });
      expect(reattached.berth.sandbox).toEqual(live);
      expect(await platform.runtime.inspect(`berth-s-${id}-g1`)).toMatchObject({ running: true });

      // (b) Its container killed: once the session shows the runtime gone, recover starts a new sandbox.
      await platform.runtime.docker.getContainer(`berth-s-${id}-g1`).kill();
      await waitFor('runtime_unavailable', async () => (await session(id)).berth.runtime_unavailable, STEP_TIMEOUT_MS, platform.logs);
      const restarted = await post(id, 'recover');
      expect(restarted.berth.recover).toEqual({ outcome: 'startup-requested', reason: null, already_requested: false });
      await boundAt(id, 2);
      expect(await platform.runtime.inspect(`berth-s-${id}-g2`)).toMatchObject({ running: true });

      // (c) Terminated: recover brings the session back READY in a new sandbox, and it runs a turn.
      const terminated = await post(id, 'terminate');
      expect(terminated.status).toBe('terminated');
      const recreated = await post(id, 'recover');
      expect(recreated.berth.recover).toEqual({ outcome: 'recreated', reason: null, already_requested: false });
      expect(recreated.berth.lifecycle).toBe('READY');
      expect(recreated.status).toBe('idle');
      await boundAt(id, 3);

      model.script(reply.text('Back after recovery.'));
      await client.beta.sessions.events.send(id, { events: [{ type: 'user.message', content: [{ type: 'text', text: 'Are you back?' }] }] });
      const afterTurn = await waitFor('the turn in the recreated sandbox to end', async () => {
        const all = await events(id);
        return all.at(-1)?.type === 'session.status_idle' && all.some((e) => e.type === 'agent.message') ? all : null;
      }, STEP_TIMEOUT_MS, platform.logs);
      expect(afterTurn.at(-1)).toMatchObject({ type: 'session.status_idle', stop_reason: { type: 'end_turn' } });
      expect(JSON.stringify(afterTurn.filter((e) => e.type === 'agent.message').at(-1))).toContain('Back after recovery.');
      expect(afterTurn.filter((e) => e.type === 'berth.session_recovered').map((e) => e['outcome'])).toEqual(['reattached', 'startup-requested', 'recreated']);
    },
    300_000,
  );

  /** Every container of the session, running or not, by the name the manager gives it. */
  const containersOf = async (sessionId: string) => (await platform.runtime.docker.listContainers({ all: true })).filter((c) => c.Names.some((n) => n.includes(sessionId)));
  const turn = async (sessionId: string, text: string, answer: string) => {
    model.script(reply.text(answer));
    const before = (await events(sessionId)).length;
    await client.beta.sessions.events.send(sessionId, { events: [{ type: 'user.message', content: [{ type: 'text', text }] }] });
    return waitFor(`the turn "${text}" to end`, async () => {
      const all = (await events(sessionId)).slice(before);
      return all.at(-1)?.type === 'session.status_idle' && all.some((e) => e.type === 'agent.message') ? all : null;
    }, STEP_TIMEOUT_MS, platform.logs);
  };
  /** The last generation request that carried this prompt (the turn's own request, not a side request of the harness). */
  const requestFor = (prompt: string) => model.modelRequests.map((r) => JSON.stringify(r.body)).filter((body) => body.includes(prompt)).at(-1) ?? '';

  it(
    'pause releases the sandbox (no container left) and keeps the conversation; resume, or the next message, rebuilds it',
    async () => {
      const agent = await client.beta.agents.create({ name: 'pause-agent', model: 'claude-sonnet-4-5' });
      const env = await client.beta.environments.create({
        name: 'pause-env',
        config: { type: 'cloud', harness: 'claude-code' } as Anthropic.Beta.Environments.BetaCloudConfigParams,
      });
      const { id } = await client.beta.sessions.create({ agent: agent.id, environment_id: env.id });
      await boundAt(id, 1);
      await turn(id, 'Remember the word heron.', 'I will remember heron.');
      expect((await containersOf(id)).map((c) => c.State)).toEqual(['running']);

      const paused = await post(id, 'pause');
      expect(paused).toMatchObject({ status: 'idle', berth: { paused: true, sandbox: null } });
      await waitFor('no container left for the paused session', async () => ((await containersOf(id)).length === 0 ? true : null), STEP_TIMEOUT_MS, platform.logs);
      expect((await events(id)).filter((e) => e.type === 'berth.lifecycle').map((e) => e['lifecycle'])).toEqual(['paused']);
      // Pausing again changes nothing.
      expect((await post(id, 'pause')).berth.paused).toBe(true);

      const resumed = await post(id, 'resume');
      expect(resumed.berth.paused).toBe(false);
      await boundAt(id, 2);
      expect(await platform.runtime.inspect(`berth-s-${id}-g2`)).toMatchObject({ running: true });
      await turn(id, 'Which word did I ask you to remember?', 'Heron.');
      // The harness resumed its conversation in the new sandbox: the model saw the turn before the pause.
      expect(requestFor('Which word did I ask you to remember?')).toContain('Remember the word heron.');
      expect(requestFor('Which word did I ask you to remember?')).toContain('I will remember heron.');

      // Paused again, a message alone brings it back.
      await post(id, 'pause');
      expect((await containersOf(id)).length).toBeGreaterThan(0);
      await waitFor('no container left after the second pause', async () => ((await containersOf(id)).length === 0 ? true : null), STEP_TIMEOUT_MS, platform.logs);
      const after = await turn(id, 'And now?', 'Still heron.');
      expect(after.map((e) => e.type)).toEqual(expect.arrayContaining(['berth.lifecycle', 'berth.sandbox_requested', 'user.message', 'agent.message']));
      expect((await session(id)).berth).toMatchObject({ paused: false, sandbox: { generation: 3 } });
      expect(requestFor('And now?')).toContain('Which word did I ask you to remember?');
    },
    300_000,
  );
});
