import Anthropic from '@anthropic-ai/sdk';
import { AnthropicMessagesServer, reply } from '@berth/testing';
import { e2eEnvironmentConfig, startE2ePlatform, waitFor, type E2ePlatform } from '../testing/e2e-platform';
import { listEvents, type PublicEvent } from '../testing/session-events';

/**
 * `volume` workspaces (Docker named volumes: no quota) get the environment's
 * `resources.workspace_mb` as a soft limit, through the gateway with the official SDK and a real
 * Claude Code turn: a turn may write past it (nothing stops a write), the next turn is refused
 * before its harness starts with a `session.error` naming the sizes and the setting, and raising
 * the setting lets the session go on.
 */

const TURN_TIMEOUT_MS = 120_000;

describe('the size limit of volume workspaces (soft: measured before each turn)', () => {
  let model: AnthropicMessagesServer;
  let platform: E2ePlatform;
  let client: Anthropic;

  beforeAll(async () => {
    model = await new AnthropicMessagesServer().start();
    platform = await startE2ePlatform({ modelBaseUrl: model.url, managerEnv: { BERTH_WORKSPACE_STORAGE: 'volume' } });
    client = new Anthropic({ apiKey: platform.apiKey, baseURL: platform.gatewayUrl, maxRetries: 0 });
  }, 600_000);
  afterAll(async () => {
    await platform?.stop();
    await model?.close();
  }, 120_000);

  const idle = (events: readonly PublicEvent[]) => events.filter((e) => e.type === 'session.status_idle').length;
  const send = async (sessionId: string, text: string, turnsBefore: number) => {
    await client.beta.sessions.events.send(sessionId, { events: [{ type: 'user.message', content: [{ type: 'text', text }] }] });
    return waitFor(`turn ${turnsBefore + 1} to end`, async () => {
      const events = await listEvents(client, sessionId);
      return idle(events) > turnsBefore ? events : null;
    }, TURN_TIMEOUT_MS, platform.logs);
  };
  const bash = (command: string) => ({ kind: 'turn' as const, text: 'Working.', toolCalls: [{ name: 'Bash', input: { command, description: 'work' } }] });
  const errorsOf = (events: readonly PublicEvent[]) => events.filter((e) => e.type === 'session.error') as unknown as { error: { type: string; message: string } }[];

  it(
    'refuses the turn after the one that filled the workspace past workspace_mb, and goes on once the limit is raised',
    async () => {
      const agent = await client.beta.agents.create({ name: 'filler', model: 'claude-sonnet-4-5', system: 'You write big files.', tools: [{ type: 'agent_toolset_20260401' }] });
      const env = await client.beta.environments.create({ name: 'small-disk', config: e2eEnvironmentConfig({ harness: 'claude-code', resources: { workspace_mb: 64 } }) });
      const session = await client.beta.sessions.create({ agent: agent.id, environment_id: env.id });

      // 80 MiB into a 64 MiB workspace: a volume cannot stop the write, so the turn itself succeeds.
      model.script(bash('dd if=/dev/urandom of=/workspace/big.bin bs=1M count=80 status=none && du -sm /workspace'), reply.text('Wrote it.'));
      const first = await send(session.id, 'Write a big file.', 0);
      expect(errorsOf(first)).toEqual([]);
      const container = `berth-s-${session.id}-g1`;
      const workspaceId = (await platform.runtime.inspect(container))?.labels['berth.workspace'];
      // A volume workspace indeed (the kind whose limit is soft).
      expect(await platform.runtime.docker.getVolume(`berth-ws-${workspaceId}-workspace`).inspect()).toMatchObject({ Name: `berth-ws-${workspaceId}-workspace` });

      // The next turn is refused before its harness starts: the model is never asked.
      const asked = model.requests.length;
      model.script(bash('echo should-not-run > /workspace/ran.txt'), reply.text('Ran.'));
      const second = await send(session.id, 'Go on.', 1);
      const [refusal] = errorsOf(second);
      expect(refusal?.error.type).toBe('berth.workspace_full_error');
      expect(refusal?.error.message).toMatch(new RegExp(`the workspace holds 8\\d MiB, over its 64 MiB limit \\(resources\\.workspace_mb of environment ${env.id}`));
      expect(model.requests.length).toBe(asked);
      expect(second.at(-1)).toMatchObject({ type: 'session.status_idle' });

      // Raised, the same session goes on (the soft limit is read from the environment at each turn).
      await client.beta.environments.update(env.id, { config: e2eEnvironmentConfig({ harness: 'claude-code', resources: { workspace_mb: 256 } }) });
      const third = await send(session.id, 'Go on now.', 2);
      expect(errorsOf(third)).toHaveLength(1);
      const ran = await platform.runtime.exec(container, { cmd: ['cat', '/workspace/ran.txt'] });
      const lines: string[] = [];
      for await (const line of ran.lines) lines.push(line);
      expect(lines).toEqual(['should-not-run']);
      await client.beta.sessions.delete(session.id);
    },
    600_000,
  );
});
