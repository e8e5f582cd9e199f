import Anthropic from '@anthropic-ai/sdk';
import { AnthropicMessagesServer, reply } from '@berth/testing';
import { startE2ePlatform, waitFor, type E2ePlatform } from '../testing/e2e-platform';
import { listEvents } from '../testing/session-events';

/**
 * Claude Code through the whole platform where the sandbox-manager itself is the fault: SIGKILL in
 * the middle of a turn, and while a tool use waits for the user's confirmation (then a new manager).
 */

describe('claude-code: manager killed mid-turn and while a confirmation waits; terminate and delete', () => {
  let model: AnthropicMessagesServer;
  let platform: E2ePlatform;
  let client: Anthropic;

  beforeAll(async () => {
    model = await new AnthropicMessagesServer().start();
    platform = await startE2ePlatform({ modelBaseUrl: model.url, managerEnv: { BERTH_CRASH_POINT: 'mid-turn' } });
    client = new Anthropic({ apiKey: platform.apiKey, baseURL: platform.gatewayUrl, maxRetries: 0 });
  }, 600_000);
  afterAll(async () => {
    await platform?.stop();
    await model?.close();
  }, 60_000);

  const newSession = async (bashPolicy: 'always_allow' | 'always_ask') => {
    const agent = await client.beta.agents.create({
      name: 'claude',
      model: 'claude-sonnet-4-5',
      tools: [{ type: 'agent_toolset_20260401', configs: [{ name: 'bash', permission_policy: { type: bashPolicy } }] }],
    });
    const env = await client.beta.environments.create({
      name: `claude-${bashPolicy}`,
      config: { type: 'cloud', harness: 'claude-code' } as Anthropic.Beta.Environments.BetaCloudConfigParams,
    });
    return client.beta.sessions.create({ agent: agent.id, environment_id: env.id });
  };

  it(
    'a manager killed in the middle of a turn is replaced and the turn finishes with every output exactly once',
    async () => {
      const session = await newSession('always_allow');
      model.script(
        reply.toolCall('Bash', { command: 'echo restarted > r.txt', description: 'write r.txt' }, { text: 'Writing r.txt.' }),
        reply.text('r.txt is written and this answer streams slowly to outlive the crash. '.repeat(3), { chunkDelayMs: 100, chunkSize: 8 }),
      );
      await client.beta.sessions.events.send(session.id, { events: [{ type: 'user.message', content: [{ type: 'text', text: 'write r.txt' }] }] });
      await waitFor('the manager to die at its crash point', async () => platform.manager().ended(), 90_000, platform.logs);
      await platform.restartManager({ BERTH_CRASH_POINT: '' });

      const events = await waitFor('the turn to end after the restart', async () => {
        const e = await listEvents(client, session.id);
        return e.some((x) => x.type === 'session.status_idle') ? e : null;
      }, 90_000, platform.logs);
      expect(events.at(-1)).toMatchObject({ type: 'session.status_idle', stop_reason: { type: 'end_turn' } });
      const outputs = events.filter((e) => ['agent.message', 'agent.tool_use', 'agent.tool_result'].includes(e.type));
      expect(outputs.map((e) => e.type)).toEqual(['agent.message', 'agent.tool_use', 'agent.tool_result', 'agent.message']);
      expect(JSON.stringify(outputs.at(-1))).toContain('r.txt is written');
      expect((await platform.runtime.readFile(`berth-s-${session.id}-g1`, '/workspace/r.txt'))?.toString()).toBe('restarted\n');
      expect(platform.manager().output()).toContain('reattaching');
    },
    300_000,
  );

  it(
    'a tool confirmation answered while the manager is down (kill -9) reaches the waiting harness after its restart, and the turn completes',
    async () => {
      const session = await newSession('always_ask');
      const requestsBefore = model.modelRequests.length;
      model.script(reply.toolCall('Bash', { command: 'echo survived > survived.txt', description: 'write survived.txt' }), reply.text('survived.txt is written'));
      await client.beta.sessions.events.send(session.id, { events: [{ type: 'user.message', content: [{ type: 'text', text: 'write survived.txt' }] }] });
      const waiting = await waitFor('the tool use to wait for confirmation', async () => {
        const e = await listEvents(client, session.id);
        return e.find((x) => x.type === 'session.status_idle' && (x['stop_reason'] as { type: string }).type === 'requires_action');
      }, 90_000, platform.logs);
      const toolUseId = (waiting['stop_reason'] as { event_ids: string[] }).event_ids[0];

      await platform.killManager();
      // The harness keeps waiting in its sandbox; the user's answer is recorded while no manager runs.
      await client.beta.sessions.events.send(session.id, { events: [{ type: 'user.tool_confirmation', tool_use_id: toolUseId, result: 'allow' }] });
      expect(await platform.runtime.readFile(`berth-s-${session.id}-g1`, '/workspace/survived.txt')).toBeNull();
      await platform.startManager({ BERTH_CRASH_POINT: '' });

      const events = await waitFor('the turn to end after the restart', async () => {
        const e = await listEvents(client, session.id);
        const last = e.at(-1);
        return last?.type === 'session.status_idle' && (last['stop_reason'] as { type: string }).type === 'end_turn' ? e : null;
      }, 90_000, platform.logs);
      const outputs = events.filter((e) => ['agent.tool_use', 'agent.tool_result', 'agent.message'].includes(e.type));
      expect(outputs.map((e) => e.type)).toEqual(['agent.tool_use', 'agent.tool_result', 'agent.message']);
      expect(JSON.stringify(outputs.at(-1))).toContain('survived.txt is written');
      expect((await platform.runtime.readFile(`berth-s-${session.id}-g1`, '/workspace/survived.txt'))?.toString()).toBe('survived\n');
      // The new manager followed the same harness process rather than starting a second one.
      expect(platform.manager().output()).toContain('reattaching (harness still running)');
      expect(model.modelRequests.length - requestsBefore).toBe(2);
    },
    300_000,
  );

  it(
    'terminate and delete take the session sandbox away',
    async () => {
      const terminated = await newSession('always_allow');
      const deleted = await newSession('always_allow');
      for (const s of [terminated, deleted]) {
        await waitFor('the sandbox to run', async () => (await platform.runtime.inspect(`berth-s-${s.id}-g1`))?.running, 60_000, platform.logs);
      }
      const response = await fetch(`${platform.gatewayUrl}/v1/sessions/${terminated.id}/terminate`, { method: 'POST', headers: { 'x-api-key': platform.apiKey } });
      expect(response.status).toBe(200);
      await client.beta.sessions.delete(deleted.id);
      for (const s of [terminated, deleted]) {
        await waitFor('the sandbox to be removed', async () => (await platform.runtime.inspect(`berth-s-${s.id}-g1`)) === null, 15_000, platform.logs);
      }
    },
    300_000,
  );
});

