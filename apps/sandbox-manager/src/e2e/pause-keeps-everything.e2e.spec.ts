import Anthropic from '@anthropic-ai/sdk';
import { AnthropicMessagesServer, reply } from '@berth/testing';
import { startE2ePlatform, waitFor, type E2ePlatform } from '../testing/e2e-platform';
import { listEvents, type PublicEvent } from '../testing/session-events';

/**
 * Pause with everything kept, through the whole platform with real Claude Code on the default
 * (egress) network: a pause while a tool use waits for its confirmation and messages are queued
 * releases the sandbox; after the resume the confirmation is answered, the turn goes on in a new
 * harness, the queued messages run in order and the agent reads a file it wrote before the pause.
 * A pause during a running turn waits for its end.
 */
type SessionBody = { status: string; berth: { paused: boolean; sandbox: { generation: number } | null } };

const STEP_MS = 90_000;
const CONTINUATION = '[Berth] This session was paused';
/** A file the agent writes in the turn before the pause, and reads back in the sandbox after it. */
const NOTES = { path: '/workspace/heron-notes.txt', content: 'heron notes, written before the pause\n' };
const READ_ID = 'toolu_read_heron_notes';

describe('claude-code: pause keeps pending confirmations, queued messages and running turns', () => {
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

  const post = async (sessionId: string, action: 'pause' | 'resume'): Promise<SessionBody> => {
    const response = await fetch(`${platform.gatewayUrl}/v1/sessions/${sessionId}/${action}`, { method: 'POST', headers: { 'x-api-key': platform.apiKey } });
    const body = (await response.json()) as SessionBody;
    if (response.status !== 200) throw new Error(`${action} answered ${response.status}: ${JSON.stringify(body)}`);
    return body;
  };
  const retrieve = async (id: string) => (await client.beta.sessions.retrieve(id)) as unknown as SessionBody;
  const containersOf = async (id: string) => (await platform.runtime.docker.listContainers({ all: true })).filter((c) => c.Names.some((n) => n.includes(id)));
  const say = (id: string, text: string) => client.beta.sessions.events.send(id, { events: [{ type: 'user.message', content: [{ type: 'text', text }] }] });
  const idleWith = (id: string, stop: string, after = 0, count = 1) =>
    waitFor(`${count} × idle (${stop})`, async () => {
      const events = (await listEvents(client, id)).slice(after);
      const idles = events.filter((e) => e.type === 'session.status_idle' && (e['stop_reason'] as { type: string }).type === stop);
      return idles.length >= count && events.at(-1)?.type === 'session.status_idle' ? events : null;
    }, STEP_MS, platform.logs);
  const texts = (events: readonly PublicEvent[]) => events.filter((e) => e.type === 'agent.message').map((e) => JSON.stringify(e['content']));

  const newSession = async () => {
    const agent = await client.beta.agents.create({
      name: 'pausing',
      model: 'claude-sonnet-4-5',
      system: 'You are a careful pausing agent.',
      tools: [{ type: 'agent_toolset_20260401', configs: [{ name: 'bash', permission_policy: { type: 'always_ask' } }] }],
    });
    const env = await client.beta.environments.create({ name: 'pause-env', config: { type: 'cloud', harness: 'claude-code' } as Anthropic.Beta.Environments.BetaCloudConfigParams });
    return (await client.beta.sessions.create({ agent: agent.id, environment_id: env.id })).id;
  };

  it(
    'paused while a confirmation waits and two messages queue: no container; resumed, the answer continues the turn, then the queue runs in order',
    async () => {
      const id = await newSession();
      model.scriptFor('Remember the word heron.', reply.toolCall('Write', { file_path: NOTES.path, content: NOTES.content }), reply.text('I will remember heron.'));
      await say(id, 'Remember the word heron.');
      await idleWith(id, 'end_turn');

      const call = { command: 'echo kept > kept.txt', description: 'write kept.txt' };
      model.scriptFor('write kept.txt', reply.toolCall('Bash', call, { text: 'Writing kept.txt.' }));
      await say(id, 'write kept.txt');
      const waiting = await idleWith(id, 'requires_action');
      const toolUseId = (waiting.at(-1)?.['stop_reason'] as { event_ids: string[] }).event_ids[0];
      await say(id, 'Say queued-one.');
      await say(id, 'Say queued-two.');

      const paused = await post(id, 'pause');
      expect(paused).toMatchObject({ status: 'idle', berth: { paused: true, sandbox: null } });
      await waitFor('no container left for the paused session', async () => ((await containersOf(id)).length === 0 ? true : null), STEP_MS, platform.logs);
      const lifecycle = (await listEvents(client, id)).filter((e) => e.type === 'berth.lifecycle');
      expect(lifecycle.map((e) => [e['lifecycle'], e['turn_id']])).toEqual([['paused', expect.stringMatching(/./)]]);

      const resumed = await post(id, 'resume');
      expect(resumed.berth.paused).toBe(false);
      await waitFor('the resumed sandbox', async () => (await retrieve(id)).berth.sandbox?.generation === 2, STEP_MS, platform.logs);
      // Still waiting for the user: the pending confirmation survived the pause.
      const lastIdle = (await listEvents(client, id)).filter((e) => e.type === 'session.status_idle').at(-1);
      expect(lastIdle?.['stop_reason']).toEqual({ type: 'requires_action', event_ids: [toolUseId] });
      expect((await retrieve(id)).status).toBe('idle');
      expect(await platform.runtime.readFile(`berth-s-${id}-g2`, '/workspace/kept.txt')).toBeNull();

      // The new harness is told the answer, makes the call again, and it runs without asking twice.
      model.scriptFor(CONTINUATION, reply.toolCall('Bash', call), reply.text('kept.txt is written.'));
      model.scriptFor('queued-one', reply.toolCall('Read', { file_path: NOTES.path }, { id: READ_ID }), reply.text('queued-one done.'));
      model.scriptFor('queued-two', reply.text('queued-two done.'));
      const before = (await listEvents(client, id)).length;
      await client.beta.sessions.events.send(id, { events: [{ type: 'user.tool_confirmation', tool_use_id: toolUseId, result: 'allow' }] });
      const after = await idleWith(id, 'end_turn', before, 3);

      expect(after.filter((e) => ['agent.tool_use', 'agent.tool_result', 'agent.message', 'session.status_idle'].includes(e.type)).map((e) => e.type)).toEqual([
        'agent.tool_result',
        'agent.message',
        'session.status_idle',
        'agent.tool_use',
        'agent.tool_result',
        'agent.message',
        'session.status_idle',
        'agent.message',
        'session.status_idle',
      ]);
      expect(after.find((e) => e.type === 'agent.tool_result')?.['tool_use_id']).toBe(toolUseId);
      // The workspace survived the pause: in the new sandbox the agent reads the file written before it,
      // as the session's events show it and as the model was told it.
      const read = after.find((e) => e.type === 'agent.tool_use' && e['name'] === 'read');
      expect(read?.['input']).toEqual({ file_path: NOTES.path });
      expect(JSON.stringify(after.find((e) => e.type === 'agent.tool_result' && e['tool_use_id'] === read?.id)?.['content'])).toContain(NOTES.content.trim());
      const readResult = model.modelRequests
        .map((r) => (r.body as { messages: { content: unknown }[] }).messages.at(-1)?.content)
        .flatMap((content) => (Array.isArray(content) ? (content as { type: string; tool_use_id?: string }[]) : []))
        .find((b) => b.type === 'tool_result' && b.tool_use_id === READ_ID);
      expect(JSON.stringify(readResult)).toContain(NOTES.content.trim());
      expect(texts(after)).toEqual([expect.stringContaining('kept.txt is written.'), expect.stringContaining('queued-one done.'), expect.stringContaining('queued-two done.')]);
      expect((await platform.runtime.readFile(`berth-s-${id}-g2`, '/workspace/kept.txt'))?.toString()).toBe('kept\n');
      // The continuing harness resumed the conversation: the model saw the turn before the pause and the agent's own system prompt.
      const continued = model.modelRequests.map((r) => JSON.stringify(r.body)).find((b) => b.includes(CONTINUATION)) ?? '';
      expect(continued).toContain('Remember the word heron.');
      expect(continued).toContain('I will remember heron.');
      expect(continued).toContain('You are a careful pausing agent.');
      expect(platform.manager().output()).toContain('answered a re-issued call with the answer given before the pause');
    },
    420_000,
  );

  it(
    'a pause during a running turn waits for the turn to end (the answer streams whole), then releases the sandbox; the next message resumes it',
    async () => {
      const id = await newSession();
      model.scriptFor('Tell a slow story.', reply.text('Once upon a time a slow story streamed to its very end. '.repeat(4), { chunkDelayMs: 120, chunkSize: 8 }));
      await say(id, 'Tell a slow story.');
      await waitFor('the turn to stream', async () => (await listEvents(client, id)).some((e) => e.type === 'session.status_running') || null, STEP_MS, platform.logs);
      const requested = await post(id, 'pause');
      expect(requested.berth.paused).toBe(false);
      const events = await waitFor('the pause after the turn', async () => {
        const all = await listEvents(client, id);
        return all.some((e) => e.type === 'berth.lifecycle' && e['lifecycle'] === 'paused') ? all : null;
      }, STEP_MS, platform.logs);
      const order = events.filter((e) => e.type === 'berth.lifecycle' || e.type === 'session.status_idle').map((e) => e['lifecycle'] ?? (e['stop_reason'] as { type: string }).type);
      expect(order).toEqual(['pause_requested', 'end_turn', 'paused']);
      expect(texts(events).join('')).toContain('to its very end.');
      await waitFor('no container left', async () => ((await containersOf(id)).length === 0 ? true : null), STEP_MS, platform.logs);

      model.scriptFor('What did you tell?', reply.text('A slow story.'));
      const before = events.length;
      await say(id, 'What did you tell?');
      await idleWith(id, 'end_turn', before);
      const request = model.modelRequests.map((r) => JSON.stringify(r.body)).find((b) => b.includes('What did you tell?')) ?? '';
      expect(request).toContain('Tell a slow story.');
    },
    300_000,
  );
});
