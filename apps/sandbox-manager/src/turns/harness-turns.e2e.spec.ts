import Anthropic from '@anthropic-ai/sdk';
import { AnthropicMessagesServer, OpenAiResponsesServer, reply, type ScriptedModelServer } from '@berth/testing';
import { startE2ePlatform, type E2ePlatform } from '../testing/e2e-platform';
import { listEvents, type PublicEvent } from '../testing/session-events';

/**
 * The platform end to end, for each real harness: the official SDK talks to the gateway, the
 * kernel, egress and sandbox-manager run as processes, the harness CLI runs in a real container
 * on the default network: its only way out is the egress, which forwards it to the scripted model
 * server on 127.0.0.1 with the key the sandbox never holds.
 */

interface Case {
  readonly harness: 'claude-code' | 'codex' | 'pi';
  readonly server: () => ScriptedModelServer;
  readonly writeFileCall: { name: string; input: Record<string, unknown> };
}

const cases: Case[] = [
  { harness: 'claude-code', server: () => new AnthropicMessagesServer(), writeFileCall: { name: 'Bash', input: { command: 'echo hello > out.txt', description: 'write out.txt' } } },
  { harness: 'codex', server: () => new OpenAiResponsesServer(), writeFileCall: { name: 'exec_command', input: { cmd: 'echo hello > out.txt' } } },
  { harness: 'pi', server: () => new AnthropicMessagesServer(), writeFileCall: { name: 'bash', input: { command: 'echo hello > out.txt' } } },
];

const TURN_TIMEOUT_MS = 90_000;

async function waitFor<T>(what: string, probe: () => Promise<T | null | undefined | false>, timeoutMs = TURN_TIMEOUT_MS, logs = () => ''): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\n${logs()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const idleCount = (events: readonly PublicEvent[]) => events.filter((e) => e.type === 'session.status_idle').length;
const texts = (events: readonly PublicEvent[]) =>
  events.filter((e) => e.type === 'agent.message').flatMap((e) => (e['content'] as { type: string; text?: string }[]).map((b) => b.text ?? ''));

describe.each(cases)('$harness through the platform', ({ harness, server: makeServer, writeFileCall }) => {
  let model: ScriptedModelServer;
  let platform: E2ePlatform;
  let client: Anthropic;

  beforeAll(async () => {
    model = await makeServer().start();
    platform = await startE2ePlatform({ modelBaseUrl: model.url });
    client = new Anthropic({ apiKey: platform.apiKey, baseURL: platform.gatewayUrl, maxRetries: 0 });
  }, 600_000);
  afterAll(async () => {
    await platform?.stop();
    await model?.close();
  }, 120_000);

  // always_ask: every tool of the agent asks (what all three harnesses honour).
  const newSession = async (permission: 'always_allow' | 'always_ask' = 'always_allow') => {
    const agent = await client.beta.agents.create({
      name: `${harness}-agent`,
      model: 'claude-sonnet-4-5',
      tools: [{ type: 'agent_toolset_20260401', default_config: { permission_policy: { type: permission } } }],
    });
    const env = await client.beta.environments.create({
      name: `${harness}-env`,
      config: { type: 'cloud', harness } as Anthropic.Beta.Environments.BetaCloudConfigParams,
    });
    return client.beta.sessions.create({ agent: agent.id, environment_id: env.id });
  };

  const send = async (sessionId: string, text: string, turnsBefore: number) => {
    await client.beta.sessions.events.send(sessionId, { events: [{ type: 'user.message', content: [{ type: 'text', text }] }] });
    return waitFor(`turn ${turnsBefore + 1} to end`, async () => {
      const events = await listEvents(client, sessionId);
      return idleCount(events) > turnsBefore ? events : null;
    }, TURN_TIMEOUT_MS, platform.logs);
  };

  it(
    'runs a tool that changes a file, continues the conversation, and survives its container being killed',
    async () => {
      const session = await newSession();
      model.script(
        { kind: 'turn', text: 'Writing the file.', toolCalls: [writeFileCall] },
        reply.text('The file is written.'),
      );
      const first = await send(session.id, 'Please write hello into out.txt', 0);
      const types = first.map((e) => e.type);
      expect(types).toEqual(expect.arrayContaining(['user.message', 'session.status_running', 'agent.tool_use', 'agent.tool_result', 'agent.message', 'session.status_idle']));
      expect(types.indexOf('agent.tool_use')).toBeLessThan(types.indexOf('agent.tool_result'));
      expect(texts(first).at(-1)).toBe('The file is written.');
      expect(first.at(-1)).toMatchObject({ type: 'session.status_idle', stop_reason: { type: 'end_turn' } });
      const container = `berth-s-${session.id}-g1`;
      expect((await platform.runtime.readFile(container, '/workspace/out.txt'))?.toString()).toBe('hello\n');

      model.script(reply.text('You asked me to write out.txt.'));
      const second = await send(session.id, 'What did I ask you before?', 1);
      expect(texts(second).at(-1)).toBe('You asked me to write out.txt.');
      const secondRequest = JSON.stringify(model.modelRequests.at(-1)?.body);
      expect(secondRequest).toContain('Please write hello into out.txt');
      expect(secondRequest).toContain('The file is written.');

      const killedAt = Date.now();
      await platform.runtime.docker.getContainer(container).kill();
      await waitFor('runtime_unavailable', async () => {
        const s = (await client.beta.sessions.retrieve(session.id)) as unknown as { berth: { runtime_unavailable?: boolean } };
        return s.berth.runtime_unavailable === true;
      }, 5_000, platform.logs);
      expect(Date.now() - killedAt).toBeLessThan(1_000);

      model.script(reply.text('Still the same conversation.'));
      const third = await send(session.id, 'Are you still there?', 2);
      expect(texts(third).at(-1)).toBe('Still the same conversation.');
      const thirdRequest = JSON.stringify(model.modelRequests.at(-1)?.body);
      expect(thirdRequest).toContain('Please write hello into out.txt');
      expect(thirdRequest).toContain('What did I ask you before?');
      expect(await platform.runtime.inspect(`berth-s-${session.id}-g2`)).toMatchObject({ running: true });
      // The model key reached the harness (it answered) but never the events or any service's log.
      expect(JSON.stringify(await listEvents(client, session.id))).not.toContain(platform.secrets[0]);
      expect(platform.logs()).not.toContain(platform.secrets[0]);
    },
    300_000,
  );

  it(
    'ends the turn within 2 s of an interrupt in the middle of a slow streamed answer',
    async () => {
      const session = await newSession();
      model.script(reply.text('a long answer that streams very slowly '.repeat(20), { chunkDelayMs: 250, chunkSize: 8 }));
      const requestsBefore = model.modelRequests.length;
      await client.beta.sessions.events.send(session.id, { events: [{ type: 'user.message', content: [{ type: 'text', text: 'Tell me a long story' }] }] });
      await model.waitForModelRequests(requestsBefore + 1, TURN_TIMEOUT_MS);
      await new Promise((r) => setTimeout(r, 700));
      const interruptedAt = Date.now();
      await client.beta.sessions.events.send(session.id, { events: [{ type: 'user.interrupt' }] });
      const events = await waitFor('the interrupted turn to go idle', async () => {
        const e = await listEvents(client, session.id);
        return idleCount(e) > 0 ? e : null;
      }, 5_000, platform.logs);
      expect(Date.now() - interruptedAt).toBeLessThan(2_000);
      expect(events.at(-1)).toMatchObject({ type: 'session.status_idle', stop_reason: { type: 'end_turn' } });
    },
    300_000,
  );
  it(
    'in always_ask holds a tool use (requires_action) until the user denies it, then runs the next one the user allows',
    async () => {
      const session = await newSession('always_ask');
      const sandbox = `berth-s-${session.id}-g1`;
      const waitingFor = (n: number) =>
        waitFor(`confirmation request ${n}`, async () => {
          const e = await listEvents(client, session.id);
          const asks = e.filter((x) => x.type === 'session.status_idle' && (x['stop_reason'] as { type: string }).type === 'requires_action');
          return asks.length >= n ? asks[n - 1] : null;
        }, TURN_TIMEOUT_MS, platform.logs);
      const confirm = async (waiting: PublicEvent, result: 'allow' | 'deny') => {
        const toolUseId = (waiting['stop_reason'] as { event_ids: string[] }).event_ids[0];
        await client.beta.sessions.events.send(session.id, { events: [{ type: 'user.tool_confirmation', tool_use_id: toolUseId, result, ...(result === 'deny' ? { deny_message: 'not this one' } : {}) }] });
      };
      model.script(
        reply.toolCall(writeFileCall.name, writeFileCall.input),
        reply.toolCall(writeFileCall.name, writeFileCall.input),
        reply.text('written after the second ask'),
      );
      await client.beta.sessions.events.send(session.id, { events: [{ type: 'user.message', content: [{ type: 'text', text: 'write out.txt' }] }] });

      const first = await waitingFor(1);
      expect(await platform.runtime.readFile(sandbox, '/workspace/out.txt')).toBeNull();
      await confirm(first, 'deny');
      const second = await waitingFor(2);
      expect(await platform.runtime.readFile(sandbox, '/workspace/out.txt')).toBeNull();
      await confirm(second, 'allow');

      const events = await waitFor('the turn to end', async () => {
        const e = await listEvents(client, session.id);
        const last = e.at(-1);
        return last?.type === 'session.status_idle' && (last['stop_reason'] as { type: string }).type === 'end_turn' ? e : null;
      }, TURN_TIMEOUT_MS, platform.logs);
      const toolUses = events.filter((e) => e.type === 'agent.tool_use');
      expect(toolUses.map((e) => e['evaluated_permission'])).toEqual(['ask', 'ask']);
      expect(events.filter((e) => e.type === 'agent.tool_result').map((e) => e['is_error'])).toEqual([true, false]);
      expect(texts(events).at(-1)).toBe('written after the second ask');
      expect((await platform.runtime.readFile(sandbox, '/workspace/out.txt'))?.toString()).toBe('hello\n');
    },
    300_000,
  );
});
